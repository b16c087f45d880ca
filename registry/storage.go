package registry

import (
	"fmt"
	"slices"
	"strings"

	"github.com/distribution/distribution/v3/configuration"
	_ "github.com/distribution/distribution/v3/registry/storage/driver/s3-aws" // S3 and compatible stores
	"gopkg.in/yaml.v3"
)

// StorageDrivers are the storage drivers a registry can be given
// (ARENA_REGISTRY_STORAGE): the file system (the default, under the data
// folder), S3 and the stores that speak its API (MinIO, Ceph, …), and
// memory (lost at every restart: for trials).
var StorageDrivers = []string{"filesystem", "s3", "inmemory"}

// ParseStorage reads a storage setting: the distribution registry's
// storage section, in YAML or JSON, naming one driver and its parameters,
// e.g. {"s3": {"region": "us-east-1", "bucket": "arena", "regionendpoint":
// "http://minio:9000", "forcepathstyle": true, "accesskey": "…",
// "secretkey": "…"}}. Empty: the file system (nil).
func ParseStorage(s string) (configuration.Storage, error) {
	if strings.TrimSpace(s) == "" {
		return nil, nil
	}
	var raw map[string]map[string]any
	if err := yaml.Unmarshal([]byte(s), &raw); err != nil {
		return nil, fmt.Errorf("not a storage section (YAML or JSON: {DRIVER: {PARAMETER: VALUE, …}}): %v", err)
	}
	if len(raw) != 1 {
		return nil, fmt.Errorf("name one storage driver (one of %s), not %d", strings.Join(StorageDrivers, ", "), len(raw))
	}
	for name, params := range raw {
		if !slices.Contains(StorageDrivers, name) {
			return nil, fmt.Errorf("storage driver %q: not one of %s", name, strings.Join(StorageDrivers, ", "))
		}
		if params == nil {
			params = map[string]any{}
		}
		return configuration.Storage{name: configuration.Parameters(params)}, nil
	}
	return nil, nil
}
