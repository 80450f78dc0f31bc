-- wrk script: POST /ofrep/v1/evaluate/flags (OFREP bulk) with the same varying context as frontend.lua
-- (userId as targetingKey, sessionId, plan) and the same frontend token.
-- Usage: wrk -t2 -c64 -d15s --latency -s bench/ofrep.lua http://127.0.0.1:PORT
local plans = {"free", "pro", "enterprise"}
request = function()
  local u = math.random(1, 100000)
  local body = '{"context":{"targetingKey":"user-' .. u .. '","sessionId":"s-' .. math.random(1, 1000000)
    .. '","plan":"' .. plans[(u % 3) + 1] .. '"}}'
  return wrk.format("POST", "/ofrep/v1/evaluate/flags", {
    ["Authorization"] = "default:development.bench-frontend",
    ["Content-Type"] = "application/json",
  }, body)
end
