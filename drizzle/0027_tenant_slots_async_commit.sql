-- take_tenant_slot (migrations 0025, 0026) commits asynchronously: it sets synchronous_commit off for
-- the transaction that calls it, so the commit, and with it the tenant's advisory lock, no longer
-- waits for the WAL flush. A Postgres crash may forget the last slots taken, as it ends their
-- holders' connections; a slot is a share of the workers, never data (producer/postgres/async-commit.ts).
CREATE OR REPLACE FUNCTION "take_tenant_slot"(p_tenant text, p_token uuid, p_ttl_ms integer, p_cap integer,
  p_stale_ms integer, p_window_ms integer)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  PERFORM set_config('synchronous_commit', 'off', true);
  PERFORM pg_advisory_xact_lock(hashtextextended('compactor.tenant_slots:' || p_tenant, 0));
  DELETE FROM tenant_slots WHERE tenant_id = p_tenant AND expires_at <= now();
  IF (SELECT count(*) FROM tenant_slots WHERE tenant_id = p_tenant) >= p_cap
     AND EXISTS (SELECT 1 FROM tenant_backlogs WHERE tenant_id <> p_tenant
                   AND last_enqueued_at >= now() - p_stale_ms * interval '1 millisecond'
                   AND (pending > 0 OR last_enqueued_at >= now() - p_window_ms * interval '1 millisecond')) THEN
    RETURN false;
  END IF;
  INSERT INTO tenant_slots (tenant_id, token, expires_at)
    VALUES (p_tenant, p_token, now() + p_ttl_ms * interval '1 millisecond');
  RETURN true;
END $$;
