ALTER TABLE "sessions" ADD COLUMN "reported_input_tokens" integer;--> statement-breakpoint
ALTER TABLE "sessions" ADD COLUMN "reported_token_count" bigint;