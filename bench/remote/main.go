// Command remote times ckpt's remotes against restic on the same S3
// server and the same generated tree, in one run: the cold push of the
// tree's first checkpoint, a push per agent turn (time and bytes), and a
// clone into an empty directory, beside restic's cold backup, its backup
// per turn and its restore. bench/remote.sh builds ckpt, finds versitygw
// and restic and runs it; docs/benchmarks.md records the results.
//
// The server is one Versity S3 Gateway (posix backend) on a loopback
// port with two buckets, ckpt and restic. Both tools run with their
// defaults: ckpt's zstd-compressed packs, restic's content-defined chunks,
// compression "auto" and encryption (restic cannot turn it off).
//
// What is compared with what:
//   - ckpt save (cold) is timed but is not part of the push: a store holds
//     the checkpoint before anything is pushed. restic's cold backup reads,
//     chunks and uploads in one command, so the table also gives ckpt's
//     save + push beside it;
//   - per turn, after the same 20-file change: ckpt save + ckpt push
//     against restic backup (restic rescans the tree, skipping unchanged
//     files by their metadata, and uploads new chunks);
//   - ckpt clone (a new store, every pack downloaded, the tree restored
//     and verified) against restic restore latest with an empty cache, as
//     on another machine, alternating -reps times, beside cp -a of the
//     tree (the floor: writing the same files with nothing to download).
//     Both restored trees are compared with the workspace (untimed).
package main

import (
	"bufio"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"io/fs"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/minio/minio-go/v7"
	"github.com/minio/minio-go/v7/pkg/credentials"

	"github.com/seed1cedbf7c/ckpt/bench"
	"github.com/seed1cedbf7c/ckpt/bench/internal/harness"
	"github.com/seed1cedbf7c/ckpt/bench/internal/procstat"
)

var (
	files     = flag.Int("files", 100000, "number of files in the generated tree")
	turns     = flag.Int("turns", 5, "agent turns (20 files each) to save, push and back up")
	dir       = flag.String("dir", filepath.Join(os.TempDir(), "ckpt-bench-remote"), "work directory (needs about 6x the tree's size)")
	ckptBin   = flag.String("ckpt", "ckpt", "ckpt binary")
	resticBin = flag.String("restic", "restic", "restic binary")
	gwBin     = flag.String("versitygw", "versitygw", "versitygw binary (the S3 server)")
	jsonOut   = flag.String("json", "", "also write the results as JSON to this file")
	profDir   = flag.String("cpuprofile", "", "write ckpt's CPU profiles (CKPT_CPUPROFILE) of the cold push, the last turn's save and push and the clone into this directory")
	reps      = flag.Int("reps", 3, "clones and restores to time, alternating (median reported)")
	versions  = flag.String("versions", "", "the versions of ckpt and versitygw, for the report (bench/remote.sh sets it)")
)

const (
	accessKey = "benchaccesskey"
	secretKey = "benchsecretkey0123456789"
	region    = "us-east-1"
)

func main() {
	flag.Parse()
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "remote:", err)
		os.Exit(1)
	}
}

// measurement is one timed command.
type measurement struct {
	Wall   time.Duration `json:"wall_ns"`
	CPU    time.Duration `json:"cpu_ns"` // user + system of the command
	MaxRSS int64         `json:"max_rss_kb"`
	out    string
}

// sh runs a command in wd and times it.
func sh(env []string, wd, name string, args ...string) (measurement, error) {
	c := exec.Command(name, args...)
	c.Dir = wd
	c.Env = append(append(os.Environ(), "HOME="+filepath.Join(*dir, "home"), "XDG_CACHE_HOME="+filepath.Join(*dir, "home", ".cache")), env...)
	var out, errb bytes.Buffer
	c.Stdout, c.Stderr = &out, &errb
	start := time.Now()
	err := c.Run()
	m := measurement{Wall: time.Since(start), out: out.String()}
	if ps := c.ProcessState; ps != nil {
		m.CPU = ps.UserTime() + ps.SystemTime()
		m.MaxRSS = procstat.MaxRSSKB(ps)
	}
	if err != nil {
		return m, fmt.Errorf("%s %s (in %s): %v: %s", name, strings.Join(args, " "), wd, err, strings.TrimSpace(errb.String()))
	}
	return m, nil
}

// prof is the environment that makes ckpt write a CPU profile named
// name.pprof into -cpuprofile (none without it).
func prof(env []string, name string) []string {
	if *profDir == "" {
		return env
	}
	return append(append([]string(nil), env...), "CKPT_CPUPROFILE="+filepath.Join(*profDir, name+".pprof"))
}

// settle flushes other processes' dirty data (untimed), so a measurement
// that fsyncs pays only for its own writes.
func settle() { procstat.SyncAll() }

// turnResult is one turn of both tools.
type turnResult struct {
	Turn            int         `json:"turn"`
	CkptSave        measurement `json:"ckpt_save"`
	CkptPush        measurement `json:"ckpt_push"`
	CkptBytes       int64       `json:"ckpt_push_bytes"`
	CkptServer      int64       `json:"ckpt_server_growth_bytes"`
	Restic          measurement `json:"restic_backup"`
	ResticAdded     int64       `json:"restic_data_added"`
	ResticPacked    int64       `json:"restic_data_added_packed"`
	ResticServer    int64       `json:"restic_server_growth_bytes"`
	CkptObjects     int         `json:"ckpt_push_objects"`
	ResticFilesSeen int64       `json:"restic_files_changed"`
}

type results struct {
	Files        int    `json:"files"`
	Bytes        int64  `json:"bytes"`
	Machine      string `json:"machine"`
	LoadBefore   string `json:"load_before"`
	LoadAfter    string `json:"load_after"`
	Versions     string `json:"versions"`
	ResticVer    string `json:"restic_version"`
	Date         string `json:"date"`
	CkptSaveCold measurement
	CkptPushCold measurement
	CkptColdByte int64 `json:"ckpt_cold_push_bytes"`
	CkptColdSrv  int64 `json:"ckpt_cold_server_bytes"`
	ResticCold   measurement
	ResticColdAd int64 `json:"restic_cold_data_added"`
	ResticColdPk int64 `json:"restic_cold_data_added_packed"`
	ResticColdSv int64 `json:"restic_cold_server_bytes"`
	Turns        []turnResult
	CkptClone    []measurement
	ResticRest   []measurement
	CopyFloor    []measurement `json:"cp_a"`
	CkptSrvEnd   int64         `json:"ckpt_server_bytes_end"`
	ResticSrvEnd int64         `json:"restic_server_bytes_end"`
}

func run() error {
	home := filepath.Join(*dir, "home")
	work := filepath.Join(*dir, "work")
	s3dir := filepath.Join(*dir, "s3")
	store := filepath.Join(*dir, "ckpt-store")
	cloneDir := filepath.Join(*dir, "ckpt-clone")
	cloneStore := filepath.Join(*dir, "ckpt-clone-store")
	restoreDir := filepath.Join(*dir, "restic-restore")
	resticCache := filepath.Join(*dir, "restic-cache")
	resticCache2 := filepath.Join(*dir, "restic-cache-restore")
	for _, p := range []string{work, s3dir, store, cloneDir, cloneStore, restoreDir, resticCache, resticCache2, home} {
		if err := os.RemoveAll(p); err != nil {
			return err
		}
	}
	if *profDir != "" {
		if err := os.MkdirAll(*profDir, 0o755); err != nil {
			return err
		}
	}
	for _, p := range []string{s3dir, home} {
		if err := os.MkdirAll(p, 0o755); err != nil {
			return err
		}
	}
	var res results
	res.Machine = harness.Machine()
	res.LoadBefore = harness.LoadAvg()
	res.Date = time.Now().UTC().Format("2006-01-02")

	// The server.
	endpoint, stop, err := startGateway(s3dir)
	if err != nil {
		return err
	}
	defer stop()
	fmt.Fprintf(os.Stderr, "== versitygw at %s, data in %s\n", endpoint, s3dir)
	for _, b := range []string{"ckpt", "restic"} {
		if err := makeBucket(endpoint, b); err != nil {
			return err
		}
	}
	awsEnv := []string{"AWS_ACCESS_KEY_ID=" + accessKey, "AWS_SECRET_ACCESS_KEY=" + secretKey,
		"AWS_REGION=" + region, "AWS_DEFAULT_REGION=" + region}
	ckptEnv := append([]string{"CKPT_STORE=" + store, "CKPT_BACKEND=sqlite"}, awsEnv...)
	resticEnv := append([]string{"RESTIC_REPOSITORY=s3:" + endpoint + "/restic", "RESTIC_PASSWORD=bench",
		"RESTIC_CACHE_DIR=" + resticCache, "RESTIC_PROGRESS_FPS=0.2"}, awsEnv...)
	ckptBucket, resticBucket := filepath.Join(s3dir, "ckpt"), filepath.Join(s3dir, "restic")

	res.Versions = *versions
	if m, err := sh(nil, *dir, *resticBin, "version"); err == nil {
		res.ResticVer = firstLine(m.out)
	}

	// The tree.
	fmt.Fprintf(os.Stderr, "== generating %d files in %s\n", *files, work)
	c, err := bench.Generate(work, *files, 1)
	if err != nil {
		return err
	}
	res.Files, res.Bytes = c.Files, c.Bytes
	fmt.Fprintf(os.Stderr, "   %d files, %.0f MB\n", c.Files, float64(c.Bytes)/1e6)

	// ckpt, cold: the first checkpoint, then its push.
	fmt.Fprintln(os.Stderr, "== ckpt save (cold)")
	settle()
	if res.CkptSaveCold, err = sh(prof(ckptEnv, "save-cold"), work, *ckptBin, "save", "-q", "-m", "cold"); err != nil {
		return err
	}
	// Let ckpt's stat cache trust the files (written before the clock), as
	// in an agent's session: the next save sees the same tree (untimed).
	time.Sleep(10 * time.Millisecond)
	if _, err := sh(ckptEnv, work, *ckptBin, "save", "-q"); err != nil {
		return err
	}
	url := "s3://ckpt/bench?endpoint=" + endpoint
	if _, err := sh(ckptEnv, work, *ckptBin, "remote", "add", "origin", url); err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, "== ckpt push (cold)")
	settle()
	if res.CkptPushCold, err = sh(prof(ckptEnv, "push-cold"), work, *ckptBin, "push", "--progress", "none", "--json"); err != nil {
		return err
	}
	p, err := pushJSON(res.CkptPushCold.out)
	if err != nil {
		return err
	}
	res.CkptColdByte = p.Bytes
	res.CkptColdSrv = bench.DirSize(ckptBucket)
	fmt.Fprintf(os.Stderr, "   %s, %d objects, %.1f MB uploaded\n", res.CkptPushCold.Wall.Round(time.Millisecond), p.Objects, float64(p.Bytes)/1e6)

	// restic, cold.
	fmt.Fprintln(os.Stderr, "== restic init, restic backup (cold)")
	if _, err := sh(resticEnv, work, *resticBin, "init"); err != nil {
		return err
	}
	settle()
	if res.ResticCold, err = sh(resticEnv, work, *resticBin, "backup", "--json", "--host", "bench", "."); err != nil {
		return err
	}
	s, err := resticSummary(res.ResticCold.out)
	if err != nil {
		return err
	}
	res.ResticColdAd, res.ResticColdPk = s.DataAdded, s.DataAddedPacked
	res.ResticColdSv = bench.DirSize(resticBucket)
	fmt.Fprintf(os.Stderr, "   %s, %.1f MB added (%.1f MB packed)\n", res.ResticCold.Wall.Round(time.Millisecond), float64(s.DataAdded)/1e6, float64(s.DataAddedPacked)/1e6)

	// The turns.
	list, err := bench.Files(work)
	if err != nil {
		return err
	}
	for t := 1; t <= *turns; t++ {
		if list, err = bench.TurnIn(work, list, t); err != nil {
			return err
		}
		tr := turnResult{Turn: t}
		settle()
		if tr.CkptSave, err = sh(prof(ckptEnv, "save-turn"), work, *ckptBin, "save", "-q", "--kind", "turn", "-m", fmt.Sprint("turn ", t)); err != nil {
			return err
		}
		c0 := bench.DirSize(ckptBucket)
		settle()
		if tr.CkptPush, err = sh(prof(ckptEnv, "push-turn"), work, *ckptBin, "push", "--progress", "none", "--json"); err != nil {
			return err
		}
		p, err := pushJSON(tr.CkptPush.out)
		if err != nil {
			return err
		}
		tr.CkptBytes, tr.CkptObjects, tr.CkptServer = p.Bytes, p.Objects, bench.DirSize(ckptBucket)-c0

		r0 := bench.DirSize(resticBucket)
		settle()
		if tr.Restic, err = sh(resticEnv, work, *resticBin, "backup", "--json", "--host", "bench", "."); err != nil {
			return err
		}
		s, err := resticSummary(tr.Restic.out)
		if err != nil {
			return err
		}
		tr.ResticAdded, tr.ResticPacked, tr.ResticServer = s.DataAdded, s.DataAddedPacked, bench.DirSize(resticBucket)-r0
		tr.ResticFilesSeen = s.FilesChanged + s.FilesNew
		fmt.Fprintf(os.Stderr, "== turn %d: ckpt save %s + push %s (%d KB); restic backup %s (%d KB added, %d KB packed)\n", t,
			tr.CkptSave.Wall.Round(time.Millisecond), tr.CkptPush.Wall.Round(time.Millisecond), tr.CkptBytes/1024,
			tr.Restic.Wall.Round(time.Millisecond), tr.ResticAdded/1024, tr.ResticPacked/1024)
		res.Turns = append(res.Turns, tr)
	}
	res.CkptSrvEnd, res.ResticSrvEnd = bench.DirSize(ckptBucket), bench.DirSize(resticBucket)

	// Clone and restore, each from nothing on this machine but the URL,
	// alternating, -reps times: writing 100,000 files is where this
	// machine's times drift most.
	want, err := treeSums(work)
	if err != nil {
		return err
	}
	cloneEnv := append([]string{"CKPT_STORE=" + cloneStore, "CKPT_BACKEND=sqlite"}, awsEnv...)
	restoreEnv := append(append([]string(nil), resticEnv...), "RESTIC_CACHE_DIR="+resticCache2)
	copyDir := filepath.Join(*dir, "copy")
	for i := 1; i <= *reps; i++ {
		for _, p := range []string{cloneDir, cloneStore, restoreDir, resticCache2, copyDir} {
			if err := os.RemoveAll(p); err != nil {
				return err
			}
		}
		settle()
		m, err := sh(prof(cloneEnv, fmt.Sprint("clone-", i)), *dir, *ckptBin, "clone", "--progress", "none", url, cloneDir)
		if err != nil {
			return err
		}
		res.CkptClone = append(res.CkptClone, m)
		if err := sameTree(want, cloneDir); err != nil {
			return fmt.Errorf("ckpt clone: %w", err)
		}
		settle()
		if m, err = sh(restoreEnv, *dir, *resticBin, "restore", "latest", "--target", restoreDir); err != nil {
			return err
		}
		res.ResticRest = append(res.ResticRest, m)
		if err := sameTree(want, restoreDir); err != nil {
			return fmt.Errorf("restic restore: %w", err)
		}
		// The floor: writing the same files with cp -a, from the page
		// cache, with nothing to download, decompress or verify.
		settle()
		if m, err = sh(nil, *dir, "cp", "-a", work, copyDir); err != nil {
			return err
		}
		res.CopyFloor = append(res.CopyFloor, m)
		fmt.Fprintf(os.Stderr, "== clone %s, restic restore %s (both verified), cp -a %s\n",
			res.CkptClone[i-1].Wall.Round(time.Millisecond), res.ResticRest[i-1].Wall.Round(time.Millisecond), m.Wall.Round(time.Millisecond))
	}
	res.LoadAfter = harness.LoadAvg()
	report(&res)
	if *jsonOut != "" {
		b, _ := json.MarshalIndent(res, "", "  ")
		if err := os.WriteFile(*jsonOut, b, 0o644); err != nil {
			return err
		}
	}
	return nil
}

type pushResult struct {
	Objects int   `json:"objects"`
	Bytes   int64 `json:"bytes"`
}

func pushJSON(out string) (pushResult, error) {
	var p pushResult
	if err := json.Unmarshal([]byte(out), &p); err != nil {
		return p, fmt.Errorf("ckpt push --json: %v: %q", err, out)
	}
	return p, nil
}

type resticSum struct {
	MessageType     string `json:"message_type"`
	FilesNew        int64  `json:"files_new"`
	FilesChanged    int64  `json:"files_changed"`
	DataAdded       int64  `json:"data_added"`
	DataAddedPacked int64  `json:"data_added_packed"`
}

// resticSummary finds the summary line of restic backup --json.
func resticSummary(out string) (resticSum, error) {
	sc := bufio.NewScanner(strings.NewReader(out))
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		var s resticSum
		if json.Unmarshal(sc.Bytes(), &s) == nil && s.MessageType == "summary" {
			return s, nil
		}
	}
	return resticSum{}, errors.New("restic backup --json printed no summary")
}

// startGateway runs versitygw's posix backend on data at a free loopback
// port and waits until it answers.
func startGateway(data string) (endpoint string, stop func(), err error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", nil, err
	}
	addr := "127.0.0.1:" + strconv.Itoa(l.Addr().(*net.TCPAddr).Port)
	l.Close()
	logf, err := os.Create(filepath.Join(*dir, "versitygw.log"))
	if err != nil {
		return "", nil, err
	}
	var env []string
	for _, kv := range os.Environ() {
		if n, _, _ := strings.Cut(kv, "="); strings.HasPrefix(n, "VGW_") || strings.HasPrefix(n, "ROOT_") || strings.HasPrefix(n, "AWS_") {
			continue
		}
		env = append(env, kv)
	}
	c := exec.Command(*gwBin, "--port", addr, "posix", data)
	c.Env = append(env, "ROOT_ACCESS_KEY="+accessKey, "ROOT_SECRET_KEY="+secretKey, "VGW_REGION="+region)
	c.Stdout, c.Stderr = logf, logf
	c.SysProcAttr = dieWithParent()
	if err := c.Start(); err != nil {
		logf.Close()
		return "", nil, fmt.Errorf("start %s: %w", *gwBin, err)
	}
	stop = func() {
		c.Process.Signal(syscall.SIGTERM)
		c.Wait()
		logf.Close()
	}
	endpoint = "http://" + addr
	cl, err := client(addr)
	if err != nil {
		stop()
		return "", nil, err
	}
	deadline := time.Now().Add(30 * time.Second)
	for {
		ctx, cancel := context.WithTimeout(context.Background(), time.Second)
		_, err = cl.ListBuckets(ctx)
		cancel()
		if err == nil {
			return endpoint, stop, nil
		}
		if time.Now().After(deadline) {
			stop()
			return "", nil, fmt.Errorf("versitygw on %s: no answer after 30s (%v); see %s", addr, err, logf.Name())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

func client(addr string) (*minio.Client, error) {
	return minio.New(addr, &minio.Options{Creds: credentials.NewStaticV4(accessKey, secretKey, ""), Region: region})
}

func makeBucket(endpoint, name string) error {
	cl, err := client(strings.TrimPrefix(endpoint, "http://"))
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if err := cl.MakeBucket(ctx, name, minio.MakeBucketOptions{Region: region}); err != nil {
		return fmt.Errorf("create bucket %s at %s: %w", name, endpoint, err)
	}
	return nil
}

// treeSums maps each regular file below root to its mode and SHA-256.
func treeSums(root string) (map[string]string, error) {
	sums := map[string]string{}
	err := filepath.WalkDir(root, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.Type().IsRegular() {
			return nil
		}
		fi, err := d.Info()
		if err != nil {
			return err
		}
		f, err := os.Open(p)
		if err != nil {
			return err
		}
		defer f.Close()
		h := sha256.New()
		if _, err := io.Copy(h, f); err != nil {
			return err
		}
		rel, _ := filepath.Rel(root, p)
		sums[rel] = fmt.Sprintf("%o %x", fi.Mode().Perm(), h.Sum(nil))
		return nil
	})
	return sums, err
}

// sameTree checks that root holds exactly the files of want.
func sameTree(want map[string]string, root string) error {
	got, err := treeSums(root)
	if err != nil {
		return err
	}
	var diff []string
	for p, w := range want {
		if g, ok := got[p]; !ok {
			diff = append(diff, "missing "+p)
		} else if g != w {
			diff = append(diff, "differs "+p)
		}
	}
	for p := range got {
		if _, ok := want[p]; !ok {
			diff = append(diff, "extra "+p)
		}
	}
	if len(diff) > 0 {
		sort.Strings(diff)
		if len(diff) > 5 {
			diff = append(diff[:5], fmt.Sprintf("... %d more", len(diff)-5))
		}
		return fmt.Errorf("%s is not the workspace's tree: %s", root, strings.Join(diff, "; "))
	}
	return nil
}

func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	return s
}

// medianM is the measurement of median wall time.
func medianM(ms []measurement) measurement {
	if len(ms) == 0 {
		return measurement{}
	}
	s := append([]measurement(nil), ms...)
	sort.Slice(s, func(i, j int) bool { return s[i].Wall < s[j].Wall })
	return s[len(s)/2]
}

func median(xs []time.Duration) time.Duration {
	if len(xs) == 0 {
		return 0
	}
	s := append([]time.Duration(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func medianInt(xs []int64) int64 {
	if len(xs) == 0 {
		return 0
	}
	s := append([]int64(nil), xs...)
	sort.Slice(s, func(i, j int) bool { return s[i] < s[j] })
	return s[len(s)/2]
}

func ms(d time.Duration) string {
	if d >= 10*time.Second {
		return fmt.Sprintf("%.1f s", d.Seconds())
	}
	if d >= time.Second {
		return fmt.Sprintf("%.2f s", d.Seconds())
	}
	return fmt.Sprintf("%d ms", d.Milliseconds())
}

func ratio(a, b time.Duration) string {
	if a == 0 || b == 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f", float64(a)/float64(b))
}

func size(n int64) string {
	switch {
	case n >= 10e6:
		return fmt.Sprintf("%.0f MB", float64(n)/1e6)
	case n >= 1e6:
		return fmt.Sprintf("%.1f MB", float64(n)/1e6)
	default:
		return fmt.Sprintf("%.0f KB", float64(n)/1e3)
	}
}

func report(r *results) {
	fmt.Printf("tree: %d files, %.0f MB; %s; %s\n", r.Files, float64(r.Bytes)/1e6, r.Date, r.Machine)
	fmt.Printf("%s; %s\n", r.Versions, r.ResticVer)
	fmt.Printf("load average before %s, after %s\n\n", r.LoadBefore, r.LoadAfter)

	var push, both, rb []time.Duration
	var cb, cs, ra, rp, rs []int64
	for _, t := range r.Turns {
		push = append(push, t.CkptPush.Wall)
		both = append(both, t.CkptSave.Wall+t.CkptPush.Wall)
		rb = append(rb, t.Restic.Wall)
		cb, cs = append(cb, t.CkptBytes), append(cs, t.CkptServer)
		ra, rp, rs = append(ra, t.ResticAdded), append(rp, t.ResticPacked), append(rs, t.ResticServer)
	}
	coldBoth := r.CkptSaveCold.Wall + r.CkptPushCold.Wall
	fmt.Println("| operation | ckpt | restic | ckpt / restic |")
	fmt.Println("|---|---:|---:|---:|")
	fmt.Printf("| cold: ckpt push (first checkpoint already saved) / restic backup | %s | %s | %s |\n", ms(r.CkptPushCold.Wall), ms(r.ResticCold.Wall), ratio(r.CkptPushCold.Wall, r.ResticCold.Wall))
	fmt.Printf("| cold: ckpt save + push / restic backup | %s | %s | %s |\n", ms(coldBoth), ms(r.ResticCold.Wall), ratio(coldBoth, r.ResticCold.Wall))
	fmt.Printf("| 20-file turn: ckpt push / restic backup (median of %d) | %s | %s | %s |\n", len(r.Turns), ms(median(push)), ms(median(rb)), ratio(median(push), median(rb)))
	fmt.Printf("| 20-file turn: ckpt save + push / restic backup (median) | %s | %s | %s |\n", ms(median(both)), ms(median(rb)), ratio(median(both), median(rb)))
	clone, rest, cp := medianM(r.CkptClone), medianM(r.ResticRest), medianM(r.CopyFloor)
	fmt.Printf("| clone / restore latest (empty cache; median of %d) | %s | %s | %s |\n", len(r.CkptClone), ms(clone.Wall), ms(rest.Wall), ratio(clone.Wall, rest.Wall))
	fmt.Printf("| floor: cp -a of the tree (same runs) | %s | | clone / cp -a %s, restore / cp -a %s |\n", ms(cp.Wall), ratio(clone.Wall, cp.Wall), ratio(rest.Wall, cp.Wall))
	fmt.Println()
	fmt.Println("| CPU (user + system) and peak RSS | ckpt | restic |")
	fmt.Println("|---|---:|---:|")
	fmt.Printf("| cold push / cold backup | %s, %d MB | %s, %d MB |\n", ms(r.CkptPushCold.CPU), r.CkptPushCold.MaxRSS/1024, ms(r.ResticCold.CPU), r.ResticCold.MaxRSS/1024)
	fmt.Printf("| cold save (ckpt only) | %s, %d MB | |\n", ms(r.CkptSaveCold.CPU), r.CkptSaveCold.MaxRSS/1024)
	if n := len(r.Turns); n > 0 {
		last := r.Turns[n-1]
		fmt.Printf("| turn %d: save + push / backup | %s, %d MB | %s, %d MB |\n", last.Turn, ms(last.CkptSave.CPU+last.CkptPush.CPU),
			max(last.CkptSave.MaxRSS, last.CkptPush.MaxRSS)/1024, ms(last.Restic.CPU), last.Restic.MaxRSS/1024)
	}
	fmt.Printf("| clone / restore (median run) | %s, %d MB | %s, %d MB |\n", ms(clone.CPU), clone.MaxRSS/1024, ms(rest.CPU), rest.MaxRSS/1024)
	fmt.Println()
	fmt.Println("| bytes | ckpt | restic |")
	fmt.Println("|---|---:|---:|")
	fmt.Printf("| cold: uploaded (ckpt push \"bytes\"; restic data_added / data_added_packed) | %s | %s / %s |\n", size(r.CkptColdByte), size(r.ResticColdAd), size(r.ResticColdPk))
	fmt.Printf("| cold: bucket size on the server | %s | %s |\n", size(r.CkptColdSrv), size(r.ResticColdSv))
	fmt.Printf("| 20-file turn: uploaded (median) | %s | %s / %s |\n", size(medianInt(cb)), size(medianInt(ra)), size(medianInt(rp)))
	fmt.Printf("| 20-file turn: bucket growth (median) | %s | %s |\n", size(medianInt(cs)), size(medianInt(rs)))
	fmt.Printf("| bucket size after %d turns | %s | %s |\n", len(r.Turns), size(r.CkptSrvEnd), size(r.ResticSrvEnd))
	fmt.Println()
	fmt.Println("| run | ckpt clone | restic restore | cp -a |")
	fmt.Println("|---:|---:|---:|---:|")
	for i := range r.CkptClone {
		fmt.Printf("| %d | %s | %s | %s |\n", i+1, ms(r.CkptClone[i].Wall), ms(r.ResticRest[i].Wall), ms(r.CopyFloor[i].Wall))
	}
	fmt.Println()
	fmt.Println("| turn | ckpt save | ckpt push | ckpt uploaded | ckpt bucket growth | restic backup | restic data_added | restic packed | restic bucket growth |")
	fmt.Println("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
	for _, t := range r.Turns {
		fmt.Printf("| %d | %s | %s | %s | %s | %s | %s | %s | %s |\n", t.Turn, ms(t.CkptSave.Wall), ms(t.CkptPush.Wall), size(t.CkptBytes), size(t.CkptServer),
			ms(t.Restic.Wall), size(t.ResticAdded), size(t.ResticPacked), size(t.ResticServer))
	}
}
