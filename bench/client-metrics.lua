-- wrk script: POST /api/client/metrics with a client token, one SDK's bucket of 10 flags (yes 1, no 0 each).
-- Usage: wrk -t2 -c64 -d10s -s bench/client-metrics.lua http://127.0.0.1:PORT
local toggles = {}
for i = 0, 9 do
  toggles[#toggles + 1] = '"bench-' .. i .. '":{"yes":1,"no":0,"variants":{}}'
end
wrk.method = "POST"
wrk.path = "/api/client/metrics"
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Authorization"] = "default:development.bench-client"
wrk.body = '{"appName":"bench","instanceId":"wrk","sdkVersion":"wrk:1","bucket":{'
  .. '"start":"2026-11-22T00:00:00.000Z","stop":"2026-11-22T00:01:00.000Z","toggles":{'
  .. table.concat(toggles, ",") .. '}}}'
