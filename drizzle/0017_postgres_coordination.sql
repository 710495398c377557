CREATE TABLE "rate_limits" (
	"key" varchar(255) PRIMARY KEY NOT NULL,
	"points" integer DEFAULT 0 NOT NULL,
	"expire" timestamp with time zone
);
--> statement-breakpoint
CREATE TABLE "session_leases" (
	"tenant_id" text NOT NULL,
	"session_id" text NOT NULL,
	"token" uuid NOT NULL,
	"fence" bigint DEFAULT 1 NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "session_leases_tenant_id_session_id_pk" PRIMARY KEY("tenant_id","session_id")
);
--> statement-breakpoint
CREATE TABLE "tenant_backlogs" (
	"tenant_id" text PRIMARY KEY NOT NULL,
	"pending" integer NOT NULL,
	"last_enqueued_at" timestamp with time zone NOT NULL
);
--> statement-breakpoint
CREATE TABLE "tenant_slots" (
	"tenant_id" text NOT NULL,
	"token" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "tenant_slots_tenant_id_token_pk" PRIMARY KEY("tenant_id","token")
);
