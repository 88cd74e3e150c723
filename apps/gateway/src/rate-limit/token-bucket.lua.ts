/**
 * One atomic token-bucket step. The clock is Redis's own TIME, so every gateway replica sees the same
 * bucket and the same time. Returns {allowed, remaining, retry_after_ms, ms_until_full, now_ms}.
 * KEYS[1] bucket; ARGV[1] capacity; ARGV[2] refill per millisecond; ARGV[3] cost: n > 0 takes n tokens
 * (all or none), n < 0 gives -n back (always allowed, never above capacity).
 */
export const TOKEN_BUCKET_LUA = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local capacity = tonumber(ARGV[1])
local rate = tonumber(ARGV[2])
local state = redis.call('HMGET', KEYS[1], 'tokens', 'ts')
local tokens = tonumber(state[1])
local ts = tonumber(state[2])
if tokens == nil or ts == nil then
  tokens = capacity
  ts = now
end
tokens = math.min(capacity, tokens + math.max(0, now - ts) * rate)
local cost = tonumber(ARGV[3] or '1')
local allowed = 0
if cost < 0 then
  tokens = math.min(capacity, tokens - cost)
  allowed = 1
elseif tokens >= cost then
  tokens = tokens - cost
  allowed = 1
end
local until_full = math.ceil((capacity - tokens) / rate)
redis.call('HSET', KEYS[1], 'tokens', tostring(tokens), 'ts', tostring(now))
redis.call('PEXPIRE', KEYS[1], until_full + 1000)
local retry_after = 0
if allowed == 0 then
  retry_after = math.ceil((cost - tokens) / rate)
end
return {allowed, math.floor(tokens), retry_after, until_full, now}
`;
