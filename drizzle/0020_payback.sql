ALTER TABLE "compactions" ADD COLUMN "payback_savings_usd" numeric(14, 8);--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "payback_cost_usd" numeric(14, 8);--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "payback_ratio" numeric(12, 4);--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "payback_inputs" jsonb;--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "measured_requests" integer;--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "measured_tokens_sent" bigint;--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "measured_tokens_without" bigint;--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "measured_savings_usd" numeric(14, 8);--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "measured_ratio" numeric(12, 4);--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "measured_event_ids" text[];