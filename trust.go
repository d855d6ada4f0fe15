package ckpt

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"os/user"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/seed1cedbf7c/ckpt/internal/fsroot"
	"github.com/seed1cedbf7c/ckpt/internal/store"
)

// SafeStoreEnv names the environment variable that lists stores another
// user owns which this user trusts anyway (':'-separated directories, or
// "*" for all), as git's safe.directory does for repositories.
const SafeStoreEnv = "CKPT_SAFE_STORE"

// checkStoreOwner refuses a store directory (and its database and
// config.toml, where they exist) owned by anyone but the user running
// ckpt — a store planted in a shared directory or a repository's .git by
// someone else — unless SafeStoreEnv names it. Root may use a store of
// the user it acts for (SUDO_UID), as git allows.
func checkStoreOwner(dir string) error {
	me := os.Geteuid()
	for _, p := range []string{dir, filepath.Join(dir, store.DBName), filepath.Join(dir, ConfigFile)} {
		fi, err := os.Lstat(p)
		if errors.Is(err, fs.ErrNotExist) || errors.Is(err, syscall.ENOTDIR) {
			continue
		}
		if err != nil {
			return fmt.Errorf("store %s: %w", dir, err)
		}
		owner, ok := store.FileOwner(fi)
		if !ok {
			continue
		}
		if owner == me || me == 0 && strconv.Itoa(owner) == os.Getenv("SUDO_UID") || safeStore(dir) {
			continue
		}
		who := strconv.Itoa(owner)
		if u, err := user.LookupId(who); err == nil {
			who = u.Username + " (uid " + who + ")"
		} else {
			who = "uid " + who
		}
		return withHint(fmt.Errorf("%w: %s is owned by %s, not by you (uid %d); ckpt does not use a store someone else could have planted",
			ErrForeignStore, p, who, me),
			fmt.Sprintf("if you trust it, run with %s=%s (a ':'-separated list, or '*')", SafeStoreEnv, dir))
	}
	return nil
}

func safeStore(dir string) bool {
	for _, d := range filepath.SplitList(os.Getenv(SafeStoreEnv)) {
		if d == "*" || d != "" && (filepath.Clean(d) == dir || resolvePath(d) == resolvePath(dir)) {
			return true
		}
	}
	return false
}

// Commands a store's config.toml may name (the summarizer) run only if
// the user set them on this machine with WriteConfig (`ckpt config`): a
// config.toml that came with the files — in a repository's .git, in a
// tarball, in a directory someone else shared — names a command nobody
// here chose. Approvals live in the user's state directory, not in the
// store, as a hash of the store directory and the command.
const approvalsFile = "approved-commands"

func approvalKey(storeDir, cmd string) string {
	h := sha256.Sum256([]byte(resolvePath(storeDir) + "\x00" + strings.TrimSpace(cmd)))
	return hex.EncodeToString(h[:])
}

func approvalsPath() (string, error) {
	d, err := StateDir()
	if err != nil {
		return "", err
	}
	return filepath.Join(d, approvalsFile), nil
}

func readApprovals() ([]string, error) {
	p, err := approvalsPath()
	if err != nil {
		return nil, err
	}
	data, err := fsroot.ReadRegular(p, 4<<20)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	return strings.Fields(string(data)), nil
}

// approveCommand records that the user set cmd in storeDir's config.
func approveCommand(storeDir, cmd string) error {
	if strings.TrimSpace(cmd) == "" {
		return nil
	}
	keys, err := readApprovals()
	if err != nil {
		return err
	}
	k := approvalKey(storeDir, cmd)
	if slices.Contains(keys, k) {
		return nil
	}
	p, err := approvalsPath()
	if err != nil {
		return err
	}
	if err := store.MkdirPrivate(filepath.Dir(p)); err != nil {
		return err
	}
	keys = append(keys, k)
	return writeFileAtomic(p, []byte(strings.Join(keys, "\n")+"\n"), 0o600)
}

// checkApproved returns nil if the user set cmd (a command from the
// store's config, named by key) on this machine.
func checkApproved(storeDir, key, cmd string) error {
	keys, err := readApprovals()
	if err != nil {
		return fmt.Errorf("read the approved commands: %w", err)
	}
	if slices.Contains(keys, approvalKey(storeDir, cmd)) {
		return nil
	}
	return withHint(fmt.Errorf("%w: %s names the %s command %q, which was not set with `ckpt config` on this machine (the file may have come with the workspace); ckpt did not run it",
		ErrUnapprovedCommand, filepath.Join(storeDir, ConfigFile), key, cmd),
		fmt.Sprintf("if you want it, set it yourself: ckpt config %s %s (or remove it: ckpt config --unset %s)", key, shellQuote(cmd), key))
}

// shellQuote quotes s for a POSIX shell.
func shellQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
