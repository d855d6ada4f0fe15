package run

import (
	"encoding/json"
	"runtime"
	"strings"
	"testing"
	"time"
)

// Fuzz targets for Decree's untrusted inputs. Each asserts that no input
// panics and that memory stays bounded: what one call allocates in total
// is at most a constant plus a small multiple of the input's size, whatever
// aliases it uses. CI runs each for a bounded time:
//
//	go test -run '^$' -fuzz '^FuzzParseMessage$' -fuzztime 20s ./internal/run
//	go test -run '^$' -fuzz '^FuzzParseRecord$' -fuzztime 20s ./internal/run
//	go test -run '^$' -fuzz '^FuzzDecodeYAML$' -fuzztime 20s ./internal/run

// slow is how long parsing one input may take, with room for a loaded
// machine: a parser that takes longer is a denial of service.
const slow = 3 * time.Second

// allocBound is what one call may allocate for an input of n bytes.
func allocBound(n int) uint64 { return 48<<20 + 256*uint64(n) }

// allocated returns the bytes fn allocates (the fuzz worker runs one input
// at a time, so TotalAlloc counts fn's allocations).
func allocated(fn func()) uint64 {
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	fn()
	runtime.ReadMemStats(&after)
	return after.TotalAlloc - before.TotalAlloc
}

// yamlSeeds are front matter bodies that stress the YAML limits.
var yamlSeeds = []string{
	"big: &a " + strings.Repeat("x", 4000) + "\nlist: [" + strings.TrimSuffix(strings.Repeat("*a,", 100), ",") + "]\n",
	"big: &a " + strings.Repeat("x", 4000) + "\nlist: [" + strings.TrimSuffix(strings.Repeat("*a,", 101), ",") + "]\n",
	"a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n",
	"base: &b {routine: develop, priority: high}\nmerged:\n  <<: *b\n  extra: 1\n",
	"? &k key\n: v\nother: *k\n",
	"a: &a\n  b: *a\n",
	"seq: &s 1\nid: *s\n",
	"routine: !!binary aGVsbG8=\n",
	"x: " + strings.Repeat("[", 200) + strings.Repeat("]", 200) + "\n",
	"x: " + strings.Repeat("{a: ", 100) + "b" + strings.Repeat("}", 100) + "\n",
	"k: |\n  multi\n  line\n",
	"\"quoted key\": 1\n",
	"id: c-1\nchain: c\nseq: 1\ntype: task\nroutine: r\ninput_file: specs/a.spec.md\n",
}

func FuzzParseMessage(f *testing.F) {
	for _, s := range []string{"", "body", "---\nid: a-1\n---\nx", "---\nseq: 3\nk: v\n---\n", "---\n---\n", "---\n: :\n---",
		"---\r\nk: v\r\n---\r\nbody", "  \n---\nk: v\n---", "---\nk: v\n---"} {
		f.Add("m.md", s)
	}
	for _, y := range yamlSeeds {
		f.Add("2026010100000000-3.md", "---\n"+y+"---\nbody\n")
	}
	f.Fuzz(func(t *testing.T, name, text string) {
		var m *Message
		var err error
		start := time.Now()
		if n := allocated(func() { m, err = ParseMessage(name, []byte(text)) }); n > allocBound(len(text)) {
			t.Fatalf("parsing %d bytes allocated %d bytes", len(text), n)
		}
		if d := time.Since(start); d > slow {
			t.Fatalf("parsing %d bytes took %v", len(text), d)
		}
		if err != nil {
			return
		}
		m.Normalize("develop", func() string { return "2026010100000000" })
		out := m.Marshal()
		if len(out) > 8*(MaxDecodedSize+len(text))+1024 {
			t.Fatalf("a message of %d bytes is %d bytes normalized", len(text), len(out))
		}
		back, err := ParseMessage(name, out)
		if err != nil {
			if len(out) > MaxMessageSize {
				return // normalizing may quote it past the size limit
			}
			t.Fatalf("normalized message does not parse: %v\n%s", err, out)
		}
		if !back.Normalized() || string(back.Marshal()) != string(out) {
			t.Fatalf("not a fixed point:\n%s\n---\n%s", out, back.Marshal())
		}
		if d := time.Since(start); d > 2*slow {
			t.Fatalf("parsing, normalizing and parsing again %d bytes took %v", len(text), d)
		}
	})
}

func FuzzDecodeYAML(f *testing.F) {
	for _, y := range yamlSeeds {
		f.Add(y)
	}
	f.Add("max_retries: 5\ndefault_routine: build\nnotebook_support: true\nmax_depth: 3\nai:\n  cmd: claude\n")
	f.Fuzz(func(t *testing.T, text string) {
		n := allocated(func() {
			var c Config
			DecodeYAML([]byte(text), &c)
			var m map[string]any
			DecodeYAML([]byte(text), &m)
		})
		if n > 2*allocBound(len(text)) {
			t.Fatalf("decoding %d bytes allocated %d bytes", len(text), n)
		}
	})
}

func FuzzParseRecord(f *testing.F) {
	const id = "2026010100000000-0"
	cp := strings.Repeat("0a", 32)
	for _, s := range []string{
		`{"id":"` + id + `","status":"done","checkpoint":"` + cp + `","attempts":[{"n":1,"checkpoint":"` + cp + `","exit":{"exit_code":0}}]}`,
		`{"id":"` + id + `","status":"running","owner":{"pid":12,"start":34},"current":{"n":2,"log":"routine.log","group":{"pid":56}}}`,
		`{"id":"` + id + `","status":"interrupted","checkpoint":"x"}`,
		`{"id":"../x-0","status":"done"}`,
		`{"id":"` + id + `","status":"done","attempts":[null,{"n":2}]}`,
		`{"id":"` + id + `","status":"dead","attempts":[{"n":1,"stat":"` + strings.Repeat(` a | 1 +\n`, 200) + `"}]}`,
		`{"id":"` + id + `","status":"done","params":{"k":"v"},"command":["sh","-c","x"],"inbox":"m.md","input_file":"specs/a.md"}`,
		`null`, `[]`, `{}`, `{"attempts":1e999}`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, data string) {
		var r *Record
		var err error
		if n := allocated(func() { r, err = ParseRecord(id, []byte(data)) }); n > allocBound(len(data)) {
			t.Fatalf("parsing %d bytes allocated %d bytes", len(data), n)
		}
		if err != nil {
			return
		}
		// What ckpt does with a record it accepted.
		r.Files()
		if _, err := json.Marshal(r); err != nil {
			t.Fatalf("an accepted record does not encode: %v", err)
		}
		FailureContext(r.Attempts, func(int) string { return "log" })
		for _, a := range r.Attempts {
			_ = a.Exit.String()
			TrimStat(a.Stat)
		}
		if r.Current != nil && r.Current.Group != nil && r.Current.Group.PID <= 1 {
			t.Fatal("a process group that is not a routine's was accepted")
		}
		if !ValidID(r.ID) || r.ID != id {
			t.Fatalf("accepted id %q", r.ID)
		}
	})
}
