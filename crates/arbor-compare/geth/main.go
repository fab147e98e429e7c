// Command arbor-compare-geth replays arbor-compare's flat operation stream (see
// ../src/flat.rs for the layout) on go-ethereum's Merkle Patricia trie with the path-based
// node database (triedb/pathdb) on Pebble, and writes the measurements as the JSON the
// harness reads (../src/result.rs, BackendRun).
//
// One trie holds every key (32-byte hashed paths); values are stored with a one-byte prefix
// (0x01) because the trie treats an empty value as a deletion.
//
// Durability per block (default): trie.Commit, triedb.Update, triedb.Commit(root, false)
// with pathdb's NoAsyncFlush, so the disk layer is written to Pebble before Commit returns,
// then SyncKeyValue, which syncs Pebble's write-ahead log (Pebble writes with NoSync
// otherwise). With -deferred, the block stops after triedb.Update, as a node does: pathdb
// keeps 128 diff layers in memory and flushes its 64 MiB buffer in the background.
package main

import (
	"bufio"
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/ethereum/go-ethereum/common"
	"github.com/ethereum/go-ethereum/core/rawdb"
	"github.com/ethereum/go-ethereum/core/types"
	"github.com/ethereum/go-ethereum/ethdb"
	"github.com/ethereum/go-ethereum/ethdb/pebble"
	"github.com/ethereum/go-ethereum/trie"
	"github.com/ethereum/go-ethereum/trie/trienode"
	"github.com/ethereum/go-ethereum/triedb"
	"github.com/ethereum/go-ethereum/triedb/pathdb"
	"golang.org/x/crypto/blake2b"
)

const (
	opGet = 1
	opHas = 2
	opPut = 3
	opDel = 4
)

type op struct {
	tag    byte
	key    []byte
	expect byte   // 0 unchecked, 1 absent, 2 present, 3 value digest
	elen   uint32 // expected value length (expect 3)
	edig   []byte // stored digest bytes (expect 3)
	value  []byte // put
}

type frame struct {
	kind         byte
	level        uint64
	traceOps     uint32
	transactions uint32
	ops          []op
}

type cursor struct {
	b   []byte
	err error
}

func (c *cursor) take(n int) []byte {
	if c.err != nil {
		return nil
	}
	if len(c.b) < n {
		c.err = errors.New("frame ends inside an operation")
		return nil
	}
	h := c.b[:n]
	c.b = c.b[n:]
	return h
}

func (c *cursor) u8() byte {
	h := c.take(1)
	if h == nil {
		return 0
	}
	return h[0]
}

func (c *cursor) u32() uint32 {
	h := c.take(4)
	if h == nil {
		return 0
	}
	return binary.LittleEndian.Uint32(h)
}

func (c *cursor) u64() uint64 {
	h := c.take(8)
	if h == nil {
		return 0
	}
	return binary.LittleEndian.Uint64(h)
}

func (c *cursor) ops() []op {
	n := int(c.u32())
	out := make([]op, 0, n)
	for i := 0; i < n && c.err == nil; i++ {
		o := op{tag: c.u8(), key: c.take(32)}
		switch o.tag {
		case opGet, opHas:
			o.expect = c.u8()
			if o.expect == 3 {
				o.elen = c.u32()
				o.edig = c.take(int(c.u8()))
			} else if o.expect > 3 {
				c.err = fmt.Errorf("unknown expectation %d", o.expect)
			}
		case opPut:
			o.value = c.take(int(c.u32()))
		case opDel:
		default:
			c.err = fmt.Errorf("unknown operation tag %d", o.tag)
		}
		out = append(out, o)
	}
	return out
}

// readFrame returns the next frame, or nil at the end frame.
func readFrame(r io.Reader) (*frame, error) {
	var head [5]byte
	if _, err := io.ReadFull(r, head[:]); err != nil {
		return nil, fmt.Errorf("truncated stream: %w", err)
	}
	payload := make([]byte, binary.LittleEndian.Uint32(head[1:]))
	if _, err := io.ReadFull(r, payload); err != nil {
		return nil, fmt.Errorf("truncated frame: %w", err)
	}
	c := &cursor{b: payload}
	f := &frame{kind: head[0]}
	switch f.kind {
	case 'E':
		return nil, nil
	case 'I':
		f.ops = c.ops()
	case 'B':
		f.level = c.u64()
		f.traceOps = c.u32()
		f.transactions = c.u32()
		f.ops = c.ops()
	default:
		return nil, fmt.Errorf("unknown frame kind %#x", f.kind)
	}
	if c.err == nil && len(c.b) != 0 {
		c.err = errors.New("bytes left over at the end of a frame")
	}
	return f, c.err
}

// matches reports whether value satisfies the expectation; checked is false when the
// expectation is "not checked".
func matches(o *op, value []byte, present bool) (ok bool, checked bool) {
	switch o.expect {
	case 0:
		return true, false
	case 1:
		return !present, true
	case 2:
		return present, true
	}
	if !present || uint32(len(value)) != o.elen {
		return false, true
	}
	if len(value) <= 8 {
		return bytes.Equal(value, o.edig), true
	}
	sum := blake2b.Sum256(value)
	return bytes.Equal(sum[:8], o.edig), true
}

type blockTime struct {
	Level  uint64 `json:"level"`
	Ops    uint64 `json:"ops"`
	TimeNs uint64 `json:"time_ns"`
	Rss    uint64 `json:"rss"`
}

type procIo struct {
	Rchar      uint64 `json:"rchar"`
	Wchar      uint64 `json:"wchar"`
	ReadBytes  uint64 `json:"read_bytes"`
	WriteBytes uint64 `json:"write_bytes"`
}

type run struct {
	Backend       string      `json:"backend"`
	Status        string      `json:"status"`
	Reason        *string     `json:"reason"`
	Version       string      `json:"version"`
	Durability    string      `json:"durability"`
	Settings      string      `json:"settings"`
	LoadSeconds   float64     `json:"load_seconds"`
	LoadValues    uint64      `json:"load_values"`
	DiskAfterLoad uint64      `json:"disk_after_load"`
	Blocks        []blockTime `json:"blocks"`
	PeakRss       uint64      `json:"peak_rss"`
	PeakRssReset  bool        `json:"peak_rss_reset"`
	Io            procIo      `json:"io"`
	CpuUser       float64     `json:"cpu_user"`
	CpuSys        float64     `json:"cpu_sys"`
	CheckedReads  uint64      `json:"checked_reads"`
	Mismatches    uint64      `json:"mismatches"`
	Unchecked     uint64      `json:"unchecked_reads"`
	Root          string      `json:"root"`
	Notes         []string    `json:"notes"`
}

func procIoNow() procIo {
	var p procIo
	text, err := os.ReadFile("/proc/self/io")
	if err != nil {
		return p
	}
	for _, line := range strings.Split(string(text), "\n") {
		k, v, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		n, _ := strconv.ParseUint(strings.TrimSpace(v), 10, 64)
		switch k {
		case "rchar":
			p.Rchar = n
		case "wchar":
			p.Wchar = n
		case "read_bytes":
			p.ReadBytes = n
		case "write_bytes":
			p.WriteBytes = n
		}
	}
	return p
}

func statusKiB(field string) uint64 {
	text, err := os.ReadFile("/proc/self/status")
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(text), "\n") {
		if rest, ok := strings.CutPrefix(line, field); ok {
			n, _ := strconv.ParseUint(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(rest), "kB")), 10, 64)
			return n
		}
	}
	return 0
}

func cpuSeconds() (float64, float64) {
	var ru syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &ru) != nil {
		return 0, 0
	}
	s := func(t syscall.Timeval) float64 { return float64(t.Sec) + float64(t.Usec)/1e6 }
	return s(ru.Utime), s(ru.Stime)
}

func diskBytes(dir string) uint64 {
	var total uint64
	_ = filepath.Walk(dir, func(_ string, info os.FileInfo, err error) error {
		if err == nil && !info.IsDir() {
			if st, ok := info.Sys().(*syscall.Stat_t); ok {
				total += uint64(st.Blocks) * 512
			}
		}
		return nil
	})
	return total
}

// replayer holds the trie database and the current root.
type replayer struct {
	kv       ethdb.KeyValueStore
	tdb      *triedb.Database
	root     common.Hash
	deferred bool
	run      *run
}

// block applies one frame's operations to a trie opened at the current root and commits it.
func (r *replayer) block(f *frame, number uint64) error {
	tr, err := trie.New(trie.TrieID(r.root), r.tdb)
	if err != nil {
		return err
	}
	for i := range f.ops {
		o := &f.ops[i]
		switch o.tag {
		case opGet, opHas:
			v, err := tr.Get(o.key)
			if err != nil {
				return err
			}
			present := len(v) > 0
			if present {
				v = v[1:]
			}
			ok, checked := matches(o, v, present)
			if !checked {
				r.run.Unchecked++
			} else {
				r.run.CheckedReads++
				if !ok {
					r.run.Mismatches++
				}
			}
		case opPut:
			val := make([]byte, len(o.value)+1)
			val[0] = 1
			copy(val[1:], o.value)
			if err := tr.Update(o.key, val); err != nil {
				return err
			}
		case opDel:
			if err := tr.Delete(o.key); err != nil {
				return err
			}
		}
	}
	root, nodes := tr.Commit(false)
	if nodes == nil || root == r.root {
		return nil
	}
	if err := r.tdb.Update(root, r.root, number, trienode.NewWithNodeSet(nodes), triedb.NewStateSet()); err != nil {
		return err
	}
	r.root = root
	if r.deferred {
		return nil
	}
	if err := r.tdb.Commit(root, false); err != nil {
		return err
	}
	return r.kv.(ethdb.KeyValueSyncer).SyncKeyValue()
}

func main() {
	input := flag.String("flat", "", "flat operation stream")
	dir := flag.String("dir", "", "database directory (fresh)")
	out := flag.String("out", "", "result JSON")
	deferred := flag.Bool("deferred", false, "do not force each block to disk (what a node does)")
	cleanMiB := flag.Int("clean-mib", 768, "pathdb clean trie-node cache, MiB")
	pebbleMiB := flag.Int("pebble-mib", 256, "Pebble block cache, MiB")
	flag.Parse()
	res := &run{Backend: "geth", Status: "ok", Version: "go-ethereum v1.17.10 (triedb/pathdb, Pebble)", Blocks: []blockTime{}, Notes: []string{}}
	if *deferred {
		res.Backend = "geth-deferred"
		res.Durability = "deferred (as a node): triedb.Update only; pathdb keeps 128 diff layers in memory and flushes its 64 MiB buffer in the background; Pebble writes NoSync"
	} else {
		res.Durability = "every block: triedb.Commit(root, false) with NoAsyncFlush (disk layer written to Pebble before returning), then SyncKeyValue (fsync of Pebble's WAL)"
	}
	res.Settings = fmt.Sprintf("one secure-keyed MPT (keccak), values prefixed 0x01; pathdb clean cache %d MiB, Pebble cache %d MiB; no state snapshot (StateSet empty, SnapshotNoBuild), no freezer so no state history", *cleanMiB, *pebbleMiB)
	if err := replay(*input, *dir, *deferred, *cleanMiB, *pebbleMiB, res); err != nil {
		msg := err.Error()
		res.Status = "failed"
		res.Reason = &msg
		fmt.Fprintln(os.Stderr, "arbor-compare-geth:", msg)
	}
	text, _ := json.MarshalIndent(res, "", "  ")
	if err := os.WriteFile(*out, text, 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "arbor-compare-geth: writing the result:", err)
		os.Exit(2)
	}
	if res.Status != "ok" {
		os.Exit(1)
	}
}

func replay(input, dir string, deferred bool, cleanMiB, pebbleMiB int, res *run) error {
	file, err := os.Open(input)
	if err != nil {
		return err
	}
	defer file.Close()
	rd := bufio.NewReaderSize(file, 1<<20)
	var magic [8]byte
	if _, err := io.ReadFull(rd, magic[:]); err != nil || string(magic[:]) != "ARBFLAT1" {
		return errors.New("not a flat operation stream")
	}
	kv, err := pebble.New(filepath.Join(dir, "pebble"), pebbleMiB, 512, "", false)
	if err != nil {
		return err
	}
	cfg := *pathdb.Defaults
	cfg.TrieCleanSize = cleanMiB << 20
	cfg.SnapshotNoBuild = true
	cfg.NoAsyncFlush = !deferred
	tdb := triedb.NewDatabase(rawdb.NewDatabase(kv), &triedb.Config{PathDB: &cfg})
	r := &replayer{kv: kv, tdb: tdb, root: types.EmptyRootHash, deferred: deferred, run: res}

	// Frames are read and decoded on another goroutine, a few ahead, as the Rust peers do.
	type next struct {
		f   *frame
		err error
	}
	frames := make(chan next, 4)
	go func() {
		for {
			f, err := readFrame(rd)
			frames <- next{f, err}
			if f == nil || err != nil {
				close(frames)
				return
			}
		}
	}()
	loadStart := time.Now()
	loading := true
	var io0 procIo
	var u0, s0 float64
	var number uint64
	for n := range frames {
		if n.err != nil {
			return n.err
		}
		if n.f == nil {
			break
		}
		number++
		if n.f.kind == 'I' {
			for i := range n.f.ops {
				if n.f.ops[i].tag == opPut {
					res.LoadValues++
				}
			}
			// The load is always made durable, batch by batch, in both modes.
			saved := r.deferred
			r.deferred = false
			err := r.block(n.f, number)
			r.deferred = saved
			if err != nil {
				return err
			}
			continue
		}
		if loading {
			loading = false
			res.LoadSeconds = time.Since(loadStart).Seconds()
			res.DiskAfterLoad = diskBytes(dir)
			res.PeakRssReset = os.WriteFile("/proc/self/clear_refs", []byte("5"), 0) == nil
			io0 = procIoNow()
			u0, s0 = cpuSeconds()
		}
		start := time.Now()
		if err := r.block(n.f, number); err != nil {
			return fmt.Errorf("block %d: %w", n.f.level, err)
		}
		elapsed := time.Since(start)
		res.Blocks = append(res.Blocks, blockTime{n.f.level, uint64(n.f.traceOps), uint64(elapsed.Nanoseconds()), statusKiB("VmRSS:") * 1024})
	}
	io1 := procIoNow()
	res.Io = procIo{io1.Rchar - io0.Rchar, io1.Wchar - io0.Wchar, io1.ReadBytes - io0.ReadBytes, io1.WriteBytes - io0.WriteBytes}
	u1, s1 := cpuSeconds()
	res.CpuUser, res.CpuSys = u1-u0, s1-s0
	res.PeakRss = statusKiB("VmHWM:") * 1024
	for _, b := range res.Blocks {
		if b.Rss > res.PeakRss {
			res.PeakRss = b.Rss
		}
	}
	res.Root = r.root.Hex()
	// Leave the database whole: in deferred mode this writes the diff layers out (a journal),
	// after the measured blocks.
	if deferred {
		if err := tdb.Journal(r.root); err != nil {
			res.Notes = append(res.Notes, "journal at close failed: "+err.Error())
		}
	}
	if err := tdb.Close(); err != nil {
		return err
	}
	return kv.Close()
}
