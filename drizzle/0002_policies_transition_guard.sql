CREATE TABLE "compaction_policies" (
	"tenant_id" text NOT NULL,
	"agent_id" text,
	"policy" jsonb NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "compaction_policies_tenant_agent_key" UNIQUE NULLS NOT DISTINCT("tenant_id","agent_id")
);
--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "child_session_id" text;--> statement-breakpoint
ALTER TABLE "compactions" ADD COLUMN "mode" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "child_session_id" text;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "storm_guard_seq" bigint;