-- Shared by the wrk scripts of scripts/loadtest.sh: prints one JSON line with the
-- figures of the run (latencies in milliseconds).
function report(summary, latency)
  local e = summary.errors
  local secs = summary.duration / 1e6
  io.write(string.format(
    '{"requests":%d,"duration_s":%.3f,"rps":%.1f,"mean_ms":%.3f,"p50_ms":%.3f,"p90_ms":%.3f,"p99_ms":%.3f,"max_ms":%.3f,"errors":%d,"non_2xx":%d}\n',
    summary.requests, secs, summary.requests / secs, latency.mean / 1e3,
    latency:percentile(50) / 1e3, latency:percentile(90) / 1e3,
    latency:percentile(99) / 1e3, latency.max / 1e3,
    e.connect + e.read + e.write + e.timeout, e.status))
end
