package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"time"

	"arena/registry"
	"arena/store"
)

func registryFlags(out io.Writer) (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("arena registry", flag.ContinueOnError)
	fs.SetOutput(out)
	vals := registerOnly(fs, "data", "registry-storage")
	fs.Usage = func() {
		fmt.Fprint(out, `Usage:
  arena registry gc [--data DIR] [--registry-storage SECTION]

gc removes from the server's registry (DIR/registry, or the store that
ARENA_REGISTRY_STORAGE names) the blobs no image references and the
manifests no tag names: what deleted repositories and overwritten tags
left. The server does it every day by itself, and an admin now with POST
/api/registry/gc; this command does it with the server stopped (the data
folder must not be in use).

`)
		fs.PrintDefaults()
	}
	return fs, vals
}

func cmdRegistry(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, vals := registryFlags(stderr)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help registry)", err)
	}
	if len(pos) != 1 || pos[0] != "gc" {
		return usageErr("usage: arena registry gc [--data DIR] (see arena help registry)")
	}
	cfg, err := loadOnly(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	dir := filepath.Join(cfg.Data, "registry")
	if _, err := os.Stat(dir); err != nil && cfg.RegistryStorage == nil {
		return platformErr(fmt.Errorf("no registry in %s: %w", cfg.Data, err))
	}
	// The data folder's lock: no server writes to the registry meanwhile.
	host, _ := os.Hostname()
	st, err := store.Open(cfg.Data, fmt.Sprintf("arena registry gc (pid %d on %s)", os.Getpid(), host))
	if err != nil {
		return platformErr(fmt.Errorf("%w (a running server collects its registry itself: POST /api/registry/gc as an admin)", err))
	}
	defer st.Close()
	reg, err := registry.New(ctx, registry.Config{Dir: dir, Storage: cfg.RegistryStorage}, registry.Deps{})
	if err != nil {
		return platformErr(err)
	}
	defer reg.Close()
	// No server runs: every manifest pushed by digest that no tag names
	// is collected, and no longer counts against its owner's quota.
	start := time.Now()
	if cfg.RegistryStorage != nil {
		took, err := reg.Collect(ctx)
		if err == nil {
			err = st.CollectedUntagged(ctx, start)
		}
		if err != nil {
			return platformErr(err)
		}
		fmt.Fprintf(stdout, "registry (%s storage) collected in %v\n", cfg.RegistryStorage.Type(), took.Round(1e6))
		return nil
	}
	before, _ := folderSize(dir)
	took, err := reg.Collect(ctx)
	if err == nil {
		err = st.CollectedUntagged(ctx, start)
	}
	if err != nil {
		return platformErr(err)
	}
	after, _ := folderSize(dir)
	fmt.Fprintf(stdout, "registry %s collected in %v: %d bytes before, %d after\n", dir, took.Round(1e6), before, after)
	return nil
}

// folderSize adds up the sizes of a folder's files.
func folderSize(dir string) (int64, error) {
	n, _, err := store.FolderBytes(dir)
	return n, err
}
