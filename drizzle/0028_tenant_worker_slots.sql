CREATE TABLE "tenant_worker_slots" (
	"tenant_id" text NOT NULL,
	"slot" integer NOT NULL,
	"token" uuid NOT NULL,
	"expires_at" timestamp with time zone NOT NULL,
	CONSTRAINT "tenant_worker_slots_tenant_id_slot_pk" PRIMARY KEY("tenant_id","slot")
);
--> statement-breakpoint
-- Room on each page for the next version of its rows, so that taking and giving back a place (an
-- update that leaves the key alone) stays on the page: a HOT update, whose old version the next
-- access prunes without a vacuum.
ALTER TABLE "tenant_worker_slots" SET (fillfactor = 50);
--> statement-breakpoint
-- Takes a worker place of a tenant in one statement (worker/postgres/tenant-slots.ts), as
-- take_tenant_slot (migrations 0025-0027) did with a row inserted per job and deleted after it:
-- first gives back the places its worker released since its last take (p_released_tenants[i],
-- p_released_slots[i], p_released_tokens[i]; a place retaken by another holder meanwhile is left
-- alone), then, under the tenant's advisory lock (so two workers never both take its last place),
-- refuses (NULL) when the tenant holds p_cap places or more and another tenant is active: it has jobs
-- pending, or it enqueued within p_window_ms (counts older than p_stale_ms are ignored). Else takes
-- the tenant's lowest free place (given back or expired), or a new one after its highest, and returns
-- its number. Commits asynchronously: a place is a share of the workers, never data.
CREATE OR REPLACE FUNCTION "take_tenant_worker_slot"(p_tenant text, p_token uuid, p_ttl_ms integer,
  p_cap integer, p_stale_ms integer, p_window_ms integer, p_released_tenants text[],
  p_released_slots integer[], p_released_tokens uuid[])
RETURNS integer LANGUAGE plpgsql VOLATILE AS $$
DECLARE
  v_slot integer;
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  IF cardinality(p_released_tokens) > 0 THEN
    UPDATE tenant_worker_slots s SET expires_at = '-infinity'
      FROM unnest(p_released_tenants, p_released_slots, p_released_tokens) AS r(tenant_id, slot, token)
      WHERE s.tenant_id = r.tenant_id AND s.slot = r.slot AND s.token = r.token;
  END IF;
  PERFORM pg_advisory_xact_lock(hashtextextended('compactor.tenant_slots:' || p_tenant, 0));
  IF (SELECT count(*) FROM tenant_worker_slots WHERE tenant_id = p_tenant AND expires_at > now()) >= p_cap
     AND EXISTS (SELECT 1 FROM tenant_backlogs WHERE tenant_id <> p_tenant
                   AND last_enqueued_at >= now() - p_stale_ms * interval '1 millisecond'
                   AND (pending > 0 OR last_enqueued_at >= now() - p_window_ms * interval '1 millisecond')) THEN
    RETURN NULL;
  END IF;
  UPDATE tenant_worker_slots SET token = p_token, expires_at = now() + p_ttl_ms * interval '1 millisecond'
    WHERE tenant_id = p_tenant
      AND slot = (SELECT slot FROM tenant_worker_slots WHERE tenant_id = p_tenant AND expires_at <= now()
                   ORDER BY slot LIMIT 1)
    RETURNING slot INTO v_slot;
  IF v_slot IS NULL THEN
    INSERT INTO tenant_worker_slots (tenant_id, slot, token, expires_at)
      SELECT p_tenant, coalesce(max(slot), 0) + 1, p_token, now() + p_ttl_ms * interval '1 millisecond'
        FROM tenant_worker_slots WHERE tenant_id = p_tenant
      RETURNING slot INTO v_slot;
  END IF;
  RETURN v_slot;
END $$;
