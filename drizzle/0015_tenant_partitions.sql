-- Keys a distributed Postgres can use, and the history hash-partitioned by tenant. Written by hand:
-- drizzle-kit does not generate PARTITION BY (its snapshot, 0015_snapshot.json, was generated from
-- shared/postgres/schema.ts and holds the same columns and keys, so a later generate finds nothing
-- to do).
--
-- 1. Every primary key and unique index carries tenant_id: the ledger, the batched summaries, the
--    webhook deliveries and the budget reservations are keyed (tenant_id, id); the idempotency keys
--    of the ledger and the batched summaries are unique per tenant, (tenant_id, idempotency_key).
--    Every key names its tenant or holds a random UUID, and every lookup names the tenant, so this
--    is the same rule as before.
-- 2. messages and archived_messages become PARTITION BY HASH (tenant_id), in as many partitions as
--    the setting compactor.history_partitions says (the migration runner sets it from
--    COMPACTOR_HISTORY_PARTITIONS; default 16). An existing install is converted: each table is
--    renamed, the partitioned one created, the rows copied, the old one dropped. archived_messages'
--    primary key becomes (tenant_id, compaction_id, seq).
ALTER TABLE "compactions" DROP CONSTRAINT "compactions_pkey";--> statement-breakpoint
ALTER TABLE "compactions" ADD CONSTRAINT "compactions_tenant_id_id_pk" PRIMARY KEY("tenant_id","id");--> statement-breakpoint
ALTER TABLE "summary_batches" DROP CONSTRAINT "summary_batches_pkey";--> statement-breakpoint
ALTER TABLE "summary_batches" ADD CONSTRAINT "summary_batches_tenant_id_id_pk" PRIMARY KEY("tenant_id","id");--> statement-breakpoint
ALTER TABLE "webhook_deliveries" DROP CONSTRAINT "webhook_deliveries_pkey";--> statement-breakpoint
ALTER TABLE "webhook_deliveries" ADD CONSTRAINT "webhook_deliveries_tenant_id_id_pk" PRIMARY KEY("tenant_id","id");--> statement-breakpoint
ALTER TABLE "budget_reservations" DROP CONSTRAINT "budget_reservations_pkey";--> statement-breakpoint
ALTER TABLE "budget_reservations" ADD CONSTRAINT "budget_reservations_tenant_id_id_pk" PRIMARY KEY("tenant_id","id");--> statement-breakpoint
DROP INDEX "compactions_idempotency_key_key";--> statement-breakpoint
CREATE UNIQUE INDEX "compactions_tenant_idempotency_key_key" ON "compactions" USING btree ("tenant_id","idempotency_key");--> statement-breakpoint
DROP INDEX "summary_batches_idempotency_key_key";--> statement-breakpoint
CREATE UNIQUE INDEX "summary_batches_tenant_idempotency_key_key" ON "summary_batches" USING btree ("tenant_id","idempotency_key");--> statement-breakpoint
ALTER TABLE "messages" RENAME TO "messages_unpartitioned";--> statement-breakpoint
ALTER TABLE "messages_unpartitioned" RENAME CONSTRAINT "messages_tenant_id_session_id_seq_pk" TO "messages_unpartitioned_pk";--> statement-breakpoint
ALTER TABLE "archived_messages" RENAME TO "archived_messages_unpartitioned";--> statement-breakpoint
ALTER TABLE "archived_messages_unpartitioned" RENAME CONSTRAINT "archived_messages_compaction_id_seq_pk" TO "archived_messages_unpartitioned_pk";--> statement-breakpoint
DROP INDEX "archived_messages_session_seq_idx";--> statement-breakpoint
DROP INDEX "archived_messages_system_idx";--> statement-breakpoint
DROP INDEX "archived_messages_archived_at_idx";--> statement-breakpoint
CREATE TABLE "messages" (
	"tenant_id" text NOT NULL,
	"session_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"role" text NOT NULL,
	"kind" text NOT NULL,
	"content" text NOT NULL,
	"content_blocks" json NOT NULL,
	"tool_call_id" text,
	"tool_name" text,
	"tool_use_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"tool_result_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"has_thinking" boolean DEFAULT false NOT NULL,
	"context_version" integer,
	"token_count" integer NOT NULL,
	"pinned" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL
) PARTITION BY HASH ("tenant_id");
--> statement-breakpoint
CREATE TABLE "archived_messages" (
	"tenant_id" text NOT NULL,
	"session_id" text NOT NULL,
	"seq" bigint NOT NULL,
	"role" text NOT NULL,
	"kind" text NOT NULL,
	"content" text NOT NULL,
	"content_blocks" json NOT NULL,
	"tool_call_id" text,
	"tool_name" text,
	"tool_use_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"tool_result_ids" text[] DEFAULT '{}'::text[] NOT NULL,
	"has_thinking" boolean DEFAULT false NOT NULL,
	"context_version" integer,
	"token_count" integer NOT NULL,
	"pinned" boolean DEFAULT false NOT NULL,
	"created_at" timestamp with time zone DEFAULT now() NOT NULL,
	"compaction_id" uuid NOT NULL,
	"archived_at" timestamp with time zone DEFAULT now() NOT NULL,
	"rewritten" boolean DEFAULT false NOT NULL
) PARTITION BY HASH ("tenant_id");
--> statement-breakpoint
-- The partitions: messages_p0 .. messages_p{n-1} and archived_messages_p0 .. archived_messages_p{n-1}.
DO $$
DECLARE
  setting text := current_setting('compactor.history_partitions', true);
  n integer := 16;
BEGIN
  IF coalesce(setting, '') <> '' THEN
    IF setting !~ '^[0-9]{1,4}$' OR setting::integer NOT BETWEEN 1 AND 1024 THEN
      RAISE EXCEPTION 'compactor.history_partitions is "%": it must be a whole number from 1 to 1024', setting;
    END IF;
    n := setting::integer;
  END IF;
  FOR i IN 0 .. n - 1 LOOP
    EXECUTE format('CREATE TABLE %I PARTITION OF "messages" FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
      'messages_p' || i, n, i);
    EXECUTE format('CREATE TABLE %I PARTITION OF "archived_messages" FOR VALUES WITH (MODULUS %s, REMAINDER %s)',
      'archived_messages_p' || i, n, i);
  END LOOP;
END
$$;
--> statement-breakpoint
INSERT INTO "messages" ("tenant_id", "session_id", "seq", "role", "kind", "content", "content_blocks", "tool_call_id", "tool_name", "tool_use_ids", "tool_result_ids", "has_thinking", "context_version", "token_count", "pinned", "created_at")
  SELECT "tenant_id", "session_id", "seq", "role", "kind", "content", "content_blocks", "tool_call_id", "tool_name", "tool_use_ids", "tool_result_ids", "has_thinking", "context_version", "token_count", "pinned", "created_at" FROM "messages_unpartitioned";
--> statement-breakpoint
INSERT INTO "archived_messages" ("tenant_id", "session_id", "seq", "role", "kind", "content", "content_blocks", "tool_call_id", "tool_name", "tool_use_ids", "tool_result_ids", "has_thinking", "context_version", "token_count", "pinned", "created_at", "compaction_id", "archived_at", "rewritten")
  SELECT "tenant_id", "session_id", "seq", "role", "kind", "content", "content_blocks", "tool_call_id", "tool_name", "tool_use_ids", "tool_result_ids", "has_thinking", "context_version", "token_count", "pinned", "created_at", "compaction_id", "archived_at", "rewritten" FROM "archived_messages_unpartitioned";
--> statement-breakpoint
DROP TABLE "messages_unpartitioned";--> statement-breakpoint
DROP TABLE "archived_messages_unpartitioned";--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_tenant_id_session_id_seq_pk" PRIMARY KEY("tenant_id","session_id","seq");--> statement-breakpoint
ALTER TABLE "messages" ADD CONSTRAINT "messages_tenant_id_session_id_sessions_tenant_id_id_fk" FOREIGN KEY ("tenant_id","session_id") REFERENCES "sessions"("tenant_id","id") ON DELETE cascade ON UPDATE no action;--> statement-breakpoint
ALTER TABLE "archived_messages" ADD CONSTRAINT "archived_messages_tenant_id_compaction_id_seq_pk" PRIMARY KEY("tenant_id","compaction_id","seq");--> statement-breakpoint
CREATE INDEX "archived_messages_session_seq_idx" ON "archived_messages" USING btree ("tenant_id","session_id","seq");--> statement-breakpoint
CREATE INDEX "archived_messages_system_idx" ON "archived_messages" USING btree ("tenant_id","session_id","seq") WHERE "archived_messages"."role" = 'system';--> statement-breakpoint
CREATE INDEX "archived_messages_archived_at_idx" ON "archived_messages" USING btree ("tenant_id","session_id","archived_at");
