// Package s3test gives tests a real S3 server and a way to make the
// network between it and a client misbehave.
//
// The server is the Versity S3 Gateway (versitygw) over a temporary
// directory, run as a child process on a loopback port with keys of its
// own: [Start] runs one, [Binary] finds or installs the program. The
// gateway enforces conditional writes (If-None-Match: * and If-Match on
// PutObject), so tests of compare-and-swap on a remote run against the
// real thing.
//
// [NewFaultProxy] sits between a client and the server, forwarding each
// request unchanged (Host header included, so AWS Signature Version 4
// still verifies) and, as programmed with [FaultProxy.Set], resets
// connections before or after the server saw the request, answers 500 or
// 503, cuts responses short or holds them back, counting every request
// and every fault for assertions.
//
// It is for tests only; nothing in ckpt imports it outside _test files.
package s3test
