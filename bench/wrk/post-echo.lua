-- POST with a 4 KiB body; the server echoes it back. Must match POST_BODY in
-- bench/handlers.js, which the proof check uses before timing.
wrk.method = "POST"
wrk.body = string.rep("0123456789abcdef", 256)
wrk.headers["Content-Type"] = "application/octet-stream"
