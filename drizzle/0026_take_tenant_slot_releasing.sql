-- take_tenant_slot (migration 0025) that first gives back slots its worker released since its last
-- take (worker/redis/deferred-releases.ts): pairs of p_released_tenants[i] and p_released_tokens[i],
-- deleted before the tenant's lock is taken and its slots are counted, so a worker that ends a job
-- and starts the next gives back and takes in one statement and one commit. A release needs no lock
-- (a fewer count never lets a tenant past its cap). The six-argument function stays for workers of
-- the previous release during a rolling deploy.
CREATE OR REPLACE FUNCTION "take_tenant_slot"(p_tenant text, p_token uuid, p_ttl_ms integer, p_cap integer,
  p_stale_ms integer, p_window_ms integer, p_released_tenants text[], p_released_tokens uuid[])
RETURNS boolean LANGUAGE plpgsql VOLATILE AS $$
BEGIN
  IF cardinality(p_released_tokens) > 0 THEN
    DELETE FROM tenant_slots s
      USING unnest(p_released_tenants, p_released_tokens) AS r(tenant_id, token)
      WHERE s.tenant_id = r.tenant_id AND s.token = r.token;
  END IF;
  RETURN take_tenant_slot(p_tenant, p_token, p_ttl_ms, p_cap, p_stale_ms, p_window_ms);
END $$;
