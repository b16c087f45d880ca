package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"arena/backup"
)

const backupUsage = `Usage:
  arena backup [--data DIR] DEST     back up a data folder, while its server runs
  arena restore [--data DIR] SRC     restore a backup into an empty data folder

backup copies the data folder (ARENA_DATA) into DEST, a new or empty
folder: a consistent snapshot of the database, then the replays it names,
the registry's blobs (unless ARENA_REGISTRY_STORAGE keeps them in an
object store: back that up with the store), the NATS trust material and
the logic games' player pages, and last manifest.json with every file's
size and SHA-256. It takes no lock: the server goes on playing meanwhile.
DEST is made 0700 and its files 0600: a backup holds the sessions and the
webhooks' signing secrets (see docs/operations.md#backups to give a
backup agent of another user access).

restore copies a backup into the data folder, which must be new or
empty (stop the server, give it a new folder), checking every file
against the manifest; on any difference it stops and removes what it
copied. It copies only folders and regular files, never through a
symlink: a symlink, FIFO, device or socket in the backup is refused, as
is a file larger than the manifest says. The data folder is made 0700,
its files 0600. Start the server on the folder afterwards.

See docs/operations.md#backups for a cron line.

`

func backupFlags(out io.Writer, name string) (*flag.FlagSet, map[string]*string) {
	fs := flag.NewFlagSet("arena "+name, flag.ContinueOnError)
	fs.SetOutput(out)
	vals := registerOnly(fs, "data", "registry-storage")
	fs.Usage = func() {
		fmt.Fprint(out, backupUsage)
		fs.PrintDefaults()
	}
	return fs, vals
}

func cmdBackup(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, vals := backupFlags(stderr, "backup")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help backup)", err)
	}
	if len(pos) != 1 {
		return usageErr("usage: arena backup [--data DIR] DEST (see arena help backup)")
	}
	cfg, err := loadOnly(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	start := time.Now()
	m, err := backup.Take(ctx, cfg.Data, pos[0], backup.Options{RegistryElsewhere: cfg.RegistryStorage != nil})
	if err != nil {
		return platformErr(fmt.Errorf("back up %s: %w", cfg.Data, err))
	}
	var bytes int64
	for _, f := range m.Files {
		bytes += f.Size
	}
	fmt.Fprintf(stdout, "backed up %s into %s in %v: %d matches, %d replays, %d files, %.1f MiB (schema %d)\n",
		cfg.Data, pos[0], time.Since(start).Round(time.Millisecond), m.Matches, m.Replays, len(m.Files), float64(bytes)/(1<<20), m.Schema)
	if len(m.Missing) > 0 {
		fmt.Fprintf(stdout, "%d replays expired while they were copied: marked expired in the backup\n", len(m.Missing))
	}
	switch m.Registry {
	case "storage":
		fmt.Fprintln(stdout, "the registry's blobs are in its object store (ARENA_REGISTRY_STORAGE): back them up there")
	case "none":
		fmt.Fprintln(stdout, "no registry blobs in the data folder")
	}
	return nil
}

func cmdRestore(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs, vals := backupFlags(stderr, "restore")
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return err
		}
		return usageErr("%v (see arena help restore)", err)
	}
	if len(pos) != 1 {
		return usageErr("usage: arena restore [--data DIR] SRC (see arena help restore)")
	}
	cfg, err := loadOnly(vals)
	if err != nil {
		return usageErr("%v", err)
	}
	start := time.Now()
	m, err := backup.Restore(ctx, pos[0], cfg.Data)
	if err != nil {
		return platformErr(fmt.Errorf("restore into %s: %w", cfg.Data, err))
	}
	fmt.Fprintf(stdout, "restored the backup of %s into %s in %v: %d matches, %d replays, %d files checked\n",
		m.CreatedAt.Format(time.RFC3339), cfg.Data, time.Since(start).Round(time.Millisecond), m.Matches, m.Replays, len(m.Files))
	return nil
}
