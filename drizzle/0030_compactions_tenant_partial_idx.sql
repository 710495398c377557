-- The tenant-wide ledger reads by time each get an index of their own rows: the budget checks sum
-- the paid rows (cost_usd > 0) over a day and a month, the dashboard lists the failed rows since a
-- time. They replace the full (tenant_id, created_at) index, which let a session's ledger read
-- ordered by created_at (its history, the ledger page, the payback's lookup) walk every ledger row
-- of the tenant when the statistics saw none of them; no lookup of one session can take a partial
-- index whose predicate it does not state. Most ledger rows (skipped, unpaid) enter neither.
CREATE INDEX "compactions_tenant_spend_idx" ON "compactions" USING btree ("tenant_id","created_at") WHERE "compactions"."cost_usd" > 0;--> statement-breakpoint
CREATE INDEX "compactions_tenant_failed_idx" ON "compactions" USING btree ("tenant_id","created_at") WHERE "compactions"."status" = 'failed';--> statement-breakpoint
DROP INDEX "compactions_tenant_created_idx";
