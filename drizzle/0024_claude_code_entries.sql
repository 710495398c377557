CREATE TABLE "claude_code_entries" (
	"tenant_id" text NOT NULL,
	"session_id" text NOT NULL,
	"subpath" text DEFAULT '' NOT NULL,
	"seq" bigint NOT NULL,
	"project_key" text NOT NULL,
	"uuid" text,
	"entry" json NOT NULL,
	"origin" text DEFAULT 'sdk' NOT NULL,
	"compaction_version" integer,
	"message_seq" bigint,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	CONSTRAINT "claude_code_entries_tenant_id_session_id_subpath_seq_pk" PRIMARY KEY("tenant_id","session_id","subpath","seq")
);
--> statement-breakpoint
CREATE UNIQUE INDEX "claude_code_entries_uuid_idx" ON "claude_code_entries" USING btree ("tenant_id","session_id","subpath","uuid") WHERE "claude_code_entries"."uuid" is not null;--> statement-breakpoint
CREATE INDEX "claude_code_entries_project_idx" ON "claude_code_entries" USING btree ("tenant_id","project_key");