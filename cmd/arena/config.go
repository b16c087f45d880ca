package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/docker/go-units"
	"go.uber.org/zap/zapcore"

	"arena/sandbox"
)

// Config is every setting of the sandbox and the match limits, read from
// the environment (ARENA_*) and overridden by flags. Validate names the
// bad setting.
type Config struct {
	MemoryBytes   int64
	CPUs          float64
	CPUSet        string
	PidsLimit     int64
	TmpfsBytes    int64
	Runtime       string
	AnswerTimeout time.Duration // 0: the game's default
	WarmUp        time.Duration // 0: the game's default
	LogLevel      zapcore.Level
}

// setting describes one setting: its environment variable, flag, default
// and meaning. The list is the single source for flags, environment and the
// help text.
type setting struct {
	env, flag, def, usage string
	set                   func(c *Config, v string) error
}

var settings = []setting{
	{"ARENA_MEMORY", "memory", "256m", "memory limit per bot (no swap), e.g. 256m or 1g", func(c *Config, v string) (err error) {
		c.MemoryBytes, err = units.RAMInBytes(v)
		return err
	}},
	{"ARENA_CPUS", "cpus", "1", "CPU quota per bot, in CPUs (0.5, 1, 2)", func(c *Config, v string) (err error) {
		c.CPUs, err = strconv.ParseFloat(v, 64)
		return err
	}},
	{"ARENA_CPUSET", "cpuset", "", "pin bots to these CPUs (e.g. 0-1); empty: any", func(c *Config, v string) error {
		c.CPUSet = v
		return nil
	}},
	{"ARENA_PIDS", "pids", "64", "process and thread limit per bot", func(c *Config, v string) (err error) {
		c.PidsLimit, err = strconv.ParseInt(v, 10, 64)
		return err
	}},
	{"ARENA_TMPFS", "tmpfs", "16m", "size of each bot's writable /tmp", func(c *Config, v string) (err error) {
		c.TmpfsBytes, err = units.RAMInBytes(v)
		return err
	}},
	{"ARENA_RUNTIME", "runtime", "", "OCI runtime for bots (e.g. runsc); empty: the engine's default", func(c *Config, v string) error {
		c.Runtime = v
		return nil
	}},
	{"ARENA_TURN_TIMEOUT", "timeout", "", "time per answer (e.g. 100ms); empty: the game's default", func(c *Config, v string) (err error) {
		c.AnswerTimeout, err = parseOptionalDuration(v)
		return err
	}},
	{"ARENA_WARMUP", "warmup", "", "window from container start to the first answer (e.g. 20s); empty: the game's default", func(c *Config, v string) (err error) {
		c.WarmUp, err = parseOptionalDuration(v)
		return err
	}},
	{"ARENA_LOG_LEVEL", "log-level", "warn", "log level: debug, info, warn or error", func(c *Config, v string) error {
		return c.LogLevel.Set(v)
	}},
}

func parseOptionalDuration(v string) (time.Duration, error) {
	if v == "" {
		return 0, nil
	}
	return time.ParseDuration(v)
}

// register adds the settings' flags to fs; their values are applied by
// load. Flags default to the environment, then to the built-in default.
func register(fs *flag.FlagSet) map[string]*string {
	vals := map[string]*string{}
	for _, s := range settings {
		def := s.def
		if v, ok := os.LookupEnv(s.env); ok {
			def = v
		}
		vals[s.flag] = fs.String(s.flag, def, fmt.Sprintf("%s (env %s)", s.usage, s.env))
	}
	return vals
}

// load builds the Config from the registered flags' values.
func load(vals map[string]*string) (Config, error) {
	var c Config
	for _, s := range settings {
		if err := s.set(&c, strings.TrimSpace(*vals[s.flag])); err != nil {
			return Config{}, fmt.Errorf("setting --%s / %s = %q: %v", s.flag, s.env, *vals[s.flag], err)
		}
	}
	return c, c.Validate()
}

// Validate checks the values and names the bad setting.
func (c Config) Validate() error {
	if err := c.Policy().Validate(); err != nil {
		return fmt.Errorf("sandbox setting: %w", err)
	}
	if c.AnswerTimeout < 0 {
		return fmt.Errorf("setting --timeout / ARENA_TURN_TIMEOUT: %v is negative", c.AnswerTimeout)
	}
	if c.WarmUp < 0 {
		return fmt.Errorf("setting --warmup / ARENA_WARMUP: %v is negative", c.WarmUp)
	}
	return nil
}

// Policy is the sandbox policy these settings give.
func (c Config) Policy() sandbox.Policy {
	p := sandbox.DefaultPolicy()
	p.MemoryBytes = c.MemoryBytes
	p.NanoCPUs = int64(c.CPUs * 1e9)
	p.CPUSet = c.CPUSet
	p.PidsLimit = c.PidsLimit
	p.TmpfsBytes = c.TmpfsBytes
	p.Runtime = c.Runtime
	return p
}
