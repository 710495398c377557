CREATE TABLE "summary_batches" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"tenant_id" text NOT NULL,
	"session_id" text NOT NULL,
	"idempotency_key" text NOT NULL,
	"event_id" text,
	"expected_version" integer NOT NULL,
	"strategy" jsonb NOT NULL,
	"plan" jsonb NOT NULL,
	"batch_id" text,
	"status" text DEFAULT 'queued' NOT NULL,
	"reason" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE UNIQUE INDEX "summary_batches_idempotency_key_key" ON "summary_batches" USING btree ("idempotency_key");--> statement-breakpoint
CREATE INDEX "summary_batches_open_idx" ON "summary_batches" USING btree ("status","batch_id") WHERE "summary_batches"."status" in ('queued', 'submitted');