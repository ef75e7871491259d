-- GET with the bearer token of $LOADTEST_TOKEN; with $LOADTEST_PATHS (a file of
-- paths, one per line) each request takes the next path, else wrk's URL path is used.
local here = debug.getinfo(1, "S").source:sub(2):match("(.*/)") or "./"
dofile(here .. "report.lua")
local token = os.getenv("LOADTEST_TOKEN")
local paths = {}
local file = os.getenv("LOADTEST_PATHS")
if file then
  for line in io.lines(file) do
    if #line > 0 then paths[#paths + 1] = line end
  end
end
local i = 0
wrk.headers["Authorization"] = "Bearer " .. token
request = function()
  if #paths == 0 then return wrk.format("GET") end
  i = i % #paths + 1
  return wrk.format("GET", paths[i])
end
done = function(summary, latency, requests) report(summary, latency) end
