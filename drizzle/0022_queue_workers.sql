CREATE TABLE "queue_workers" (
	"id" text PRIMARY KEY NOT NULL,
	"backend" text NOT NULL,
	"namespace" text NOT NULL,
	"target" text NOT NULL,
	"queues" text[] NOT NULL,
	"started_at" timestamp with time zone DEFAULT now() NOT NULL,
	"last_seen_at" timestamp with time zone DEFAULT now() NOT NULL
);
