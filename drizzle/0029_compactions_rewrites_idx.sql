-- The leaving read asks on every summary whether a compaction in force rewrote the session's
-- messages in place: only such ledger rows are indexed, so the check reads this small index whatever
-- the table's statistics say (statistics that saw none of a tenant's rows let the planner take any
-- index that starts with the tenant and filter every ledger row of it).
CREATE INDEX "compactions_rewrites_idx" ON "compactions" USING btree ("tenant_id","session_id") WHERE "compactions"."status" = 'applied' and "compactions"."blocks_cleared" is not null;