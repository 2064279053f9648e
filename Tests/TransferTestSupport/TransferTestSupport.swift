// Test support: an HTTP server that can misbehave, and helpers to run the real binaries.
