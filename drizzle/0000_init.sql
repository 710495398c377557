CREATE TABLE "archived_messages" (
	"tenant_id" text NOT NULL,
	"session_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"role" text NOT NULL,
	"kind" text NOT NULL,
	"content" text NOT NULL,
	"tool_call_id" text,
	"tool_name" text,
	"token_count" integer NOT NULL,
	"pinned" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"compaction_id" uuid NOT NULL,
	"archived_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "archived_messages_compaction_id_seq_pk" PRIMARY KEY("compaction_id","seq")
);
--> statement-breakpoint
CREATE TABLE "compactions" (
	"id" uuid PRIMARY KEY DEFAULT gen_random_uuid() NOT NULL,
	"session_id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"idempotency_key" text,
	"event_id" text,
	"trigger" text NOT NULL,
	"strategy" text NOT NULL,
	"summarizer" text,
	"status" text NOT NULL,
	"reason" text,
	"cutoff_seq" bigint,
	"summary_seq" bigint,
	"compaction_version" integer,
	"messages_before" integer,
	"messages_after" integer,
	"tokens_before" bigint,
	"tokens_after" bigint,
	"messages_archived" integer,
	"summary" text,
	"model" text,
	"input_tokens" integer,
	"output_tokens" integer,
	"cache_read_tokens" integer,
	"cache_write_tokens" integer,
	"cost_usd" numeric(12, 6),
	"llm_ms" integer,
	"duration_ms" integer,
	"error" text,
	"restored_at" timestamp with time zone,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
);
--> statement-breakpoint
CREATE TABLE "messages" (
	"tenant_id" text NOT NULL,
	"session_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"role" text NOT NULL,
	"kind" text NOT NULL,
	"content" text NOT NULL,
	"tool_call_id" text,
	"tool_name" text,
	"token_count" integer NOT NULL,
	"pinned" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "messages_tenant_id_session_id_seq_pk" PRIMARY KEY("tenant_id","session_id","seq")
);
--> statement-breakpoint
CREATE TABLE "sessions" (
	"id" text NOT NULL,
	"tenant_id" text NOT NULL,
	"agent_id" text,
	"last_seq" bigint DEFAULT -1 NOT NULL,
	"message_count" integer DEFAULT 0 NOT NULL,
	"token_count" bigint DEFAULT 0 NOT NULL,
	"context_window" integer,
	"compaction_version" integer DEFAULT 0 NOT NULL,
	"compaction_count" integer DEFAULT 0 NOT NULL,
	"last_compacted_at" timestamp with time zone,
	"checkpoint" jsonb,
	"parent_session_id" text,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"updated_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "sessions_tenant_id_id_pk" PRIMARY KEY("tenant_id","id")
);
--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_tenant_id_session_id_sessions_tenant_id_id_fk" FOREIGN KEY ("tenant_id","session_id") REFERENCES "sessions"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
CREATE INDEX "archived_messages_session_seq_idx" ON "archived_messages" USING btree ("tenant_id","session_id","seq");--> statement-breakpoint
CREATE UNIQUE INDEX "compactions_idempotency_key_key" ON "compactions" USING btree ("idempotency_key");--> statement-breakpoint
CREATE INDEX "compactions_session_created_idx" ON "compactions" USING btree ("tenant_id","session_id","created_at");