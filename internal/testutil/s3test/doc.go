// Package s3test gives tests a real S3 server.
//
// The server is the Versity S3 Gateway (versitygw) over a temporary
// directory, run as a child process on a loopback port with keys of its
// own: [Start] runs one, [Binary] finds or installs the program. The
// gateway enforces conditional writes (If-None-Match: * and If-Match on
// PutObject), so tests of compare-and-swap on a remote run against the
// real thing.
//
// It is for tests only; nothing in ckpt imports it outside _test files.
package s3test
