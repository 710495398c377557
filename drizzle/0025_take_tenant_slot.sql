-- Takes a worker slot of a tenant in one statement (worker/postgres/tenant-slots.ts): the steps the
-- worker ran as six round trips of one transaction (begin, lock, drop expired, count, insert,
-- commit). Under the tenant's advisory lock (held to the end of the calling transaction, so two
-- workers never both take a tenant's last slot), each statement of this VOLATILE function reads a
-- fresh snapshot: the count sees every slot committed before the lock was ours. Refuses (false)
-- when the tenant holds p_cap slots or more and another tenant is active: it has jobs pending, or
-- it enqueued within p_window_ms (counts older than p_stale_ms are ignored).
CREATE OR REPLACE FUNCTION "take_tenant_slot"(p_tenant text, p_token uuid, p_ttl_ms integer, p_cap integer,
  p_stale_ms integer, p_window_ms integer)
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
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
