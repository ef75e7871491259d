-- POST /api/v1/matching (synchronous) with the body in $LOADTEST_BODY. When
-- $LOADTEST_UNSEEN is 1, the placeholder __N__ in the body is replaced by a counter
-- unique to this run, so that every profile text is new to the query cache.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
dofile(here .. "report.lua")
local f = assert(io.open(os.getenv("LOADTEST_BODY"), "rb"))
local body = f:read("*a")
f:close()
local unseen = os.getenv("LOADTEST_UNSEEN") == "1"
local run = os.getenv("LOADTEST_RUN") or tostring(os.time())
local n = 0
wrk.method = "POST"
wrk.headers["Authorization"] = "Bearer " .. os.getenv("LOADTEST_TOKEN")
wrk.headers["Content-Type"] = "application/json"
wrk.body = body:gsub("__N__", "0")
request = function()
  if not unseen then return wrk.format() end
  n = n + 1
  return wrk.format(nil, nil, nil, (body:gsub("__N__", run .. "-" .. n)))
end
done = function(summary, latency, requests) report(summary, latency) end
