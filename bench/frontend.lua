-- wrk script: GET /api/frontend with a varying userId, sessionId and property, and the frontend token.
-- Usage: [ACCEPT_ENCODING=gzip] wrk -t2 -c64 -d15s --latency -s bench/frontend.lua http://127.0.0.1:PORT
local plans = {"free", "pro", "enterprise"}
local headers = {["Authorization"] = "default:development.bench-frontend"}
local encoding = os.getenv("ACCEPT_ENCODING")
if encoding and encoding ~= "" then headers["Accept-Encoding"] = encoding end
request = function()
  local u = math.random(1, 100000)
  local path = "/api/frontend?userId=user-" .. u .. "&sessionId=s-" .. math.random(1, 1000000)
    .. "&plan=" .. plans[(u % 3) + 1]
  return wrk.format("GET", path, headers)
end
