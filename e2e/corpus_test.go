package e2e

import (
	"bufio"
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"

	"k8s.io/apimachinery/pkg/api/meta"
	"k8s.io/apimachinery/pkg/apis/meta/v1/unstructured"
	"k8s.io/apimachinery/pkg/runtime/schema"
	utilyaml "k8s.io/apimachinery/pkg/util/yaml"
	"sigs.k8s.io/yaml"
)

// class is what SOURCES.md says about a corpus file.
type class int

const (
	// classApplyReady: listed under "Apply-ready files" without a NEGATIVE mark.
	classApplyReady class = iota
	// classNegative: listed under "Apply-ready files" but marked NEGATIVE: the tenant
	// apiserver rejects it (decode or validation error).
	classNegative
	// classNeedsConversion: listed under "needs-conversion": uses API versions Kubernetes no
	// longer serves; documents of those versions are rejected ("no matches for kind"), the
	// others in the same file are applied (partial apply).
	classNeedsConversion
	// classUndescribed: present on disk but not in SOURCES.md (treated as apply-ready).
	classUndescribed
)

func (c class) String() string {
	return [...]string{"apply-ready", "NEGATIVE", "needs-conversion", "undescribed"}[c]
}

// parseSources reads the file tables of SOURCES.md and returns the class of each listed file,
// keyed by its corpus path "<owner>-<repo>/<path>".
func parseSources(data []byte) (map[string]class, error) {
	out := map[string]class{}
	section := ""
	var header []string
	sc := bufio.NewScanner(bytes.NewReader(data))
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if strings.HasPrefix(line, "#") {
			section, header = strings.ToLower(strings.TrimLeft(line, "# ")), nil
			continue
		}
		if !strings.HasPrefix(line, "|") {
			header = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		for i := range cells {
			cells[i] = strings.TrimSpace(cells[i])
		}
		if header == nil {
			header = cells
			continue
		}
		if header[0] != "#" || strings.HasPrefix(cells[0], "---") {
			continue // separator row, or a table that is not a numbered file table
		}
		var c class
		switch {
		case strings.HasPrefix(section, "apply-ready"):
			c = classApplyReady
		case strings.HasPrefix(section, "needs-conversion"):
			c = classNeedsConversion
		default:
			continue
		}
		col := func(name string) string {
			for i, h := range header {
				if strings.HasPrefix(strings.ToLower(h), name) && i < len(cells) {
					return cells[i]
				}
			}
			return ""
		}
		repo, p := col("repo"), strings.Trim(col("path"), "`")
		if repo == "" || p == "" || !strings.Contains(repo, "/") {
			continue
		}
		if c == classApplyReady && strings.HasPrefix(strings.ToUpper(col("features")), "NEGATIVE") {
			c = classNegative
		}
		out[strings.Replace(repo, "/", "-", 1)+"/"+p] = c
	}
	if len(out) == 0 {
		return nil, errors.New("no file rows found in the Apply-ready and needs-conversion tables")
	}
	return out, sc.Err()
}

// manifest is one corpus file and how the test applies it.
type manifest struct {
	// Path is the corpus path ("<owner>-<repo>/<path>", slash-separated).
	Path  string
	File  string // absolute file name
	Class class
	Docs  []*document
	// DecodeErr is set when the file is not even YAML (then Docs may be partial).
	DecodeErr error
	// Namespace is passed to kubectl with -n: the namespace the file's namespaced documents
	// name explicitly, or else the test namespace of the file's directory.
	Namespace string
	// Explicit reports whether Namespace comes from the file itself.
	Explicit bool
}

// document is one YAML document of a manifest.
type document struct {
	Obj *unstructured.Unstructured
	GVK schema.GroupVersionKind
	// Mapping is nil when the tenant apiserver does not serve GVK.
	Mapping *meta.RESTMapping
	// Namespace is the namespace the object lands in ("" for cluster-scoped and unmapped).
	Namespace string
}

func (d *document) String() string {
	if d.Namespace != "" {
		return fmt.Sprintf("%s %s/%s", d.GVK.Kind, d.Namespace, d.Obj.GetName())
	}
	return fmt.Sprintf("%s %s", d.GVK.Kind, d.Obj.GetName())
}

// objKey identifies a tenant object.
type objKey struct {
	Group, Kind, Namespace, Name string
}

func (k objKey) String() string {
	gk := k.Kind
	if k.Group != "" {
		gk += "." + k.Group
	}
	if k.Namespace == "" {
		return gk + " " + k.Name
	}
	return gk + " " + k.Namespace + "/" + k.Name
}

func (d *document) key() objKey {
	return objKey{Group: d.GVK.Group, Kind: d.GVK.Kind, Namespace: d.Namespace, Name: d.Obj.GetName()}
}

// loadCorpus reads SOURCES.md and every manifest file under dir.
func loadCorpus(t *testing.T, dir string) []*manifest {
	t.Helper()
	sources, err := os.ReadFile(filepath.Join(dir, "SOURCES.md"))
	if err != nil {
		t.Fatal(err)
	}
	classes, err := parseSources(sources)
	if err != nil {
		t.Fatalf("SOURCES.md: %v", err)
	}
	var out []*manifest
	seen := map[string]bool{}
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if strings.HasPrefix(d.Name(), ".") && p != dir {
				return filepath.SkipDir
			}
			return nil
		}
		switch strings.ToLower(filepath.Ext(p)) {
		case ".yaml", ".yml", ".json":
		default:
			return nil
		}
		rel, err := filepath.Rel(dir, p)
		if err != nil {
			return err
		}
		rel = filepath.ToSlash(rel)
		m := &manifest{Path: rel, File: p, Class: classUndescribed}
		if c, ok := classes[rel]; ok {
			m.Class = c
			seen[rel] = true
		} else {
			t.Logf("corpus file %s is not described in SOURCES.md; treating it as apply-ready", rel)
		}
		m.Docs, m.DecodeErr = decodeFile(p)
		out = append(out, m)
		return nil
	})
	if err != nil {
		t.Fatalf("failed to read the corpus: %v", err)
	}
	for p := range classes {
		if !seen[p] {
			t.Errorf("SOURCES.md lists %s but the file is not in the corpus", p)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Path < out[j].Path })
	return out
}

// decodeFile splits a YAML (or JSON) file into documents, skipping empty ones. Flow-style
// YAML, trailing "---" and comments are handled by the YAML parser.
func decodeFile(name string) ([]*document, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	r := utilyaml.NewYAMLReader(bufio.NewReader(f))
	var docs []*document
	for {
		raw, err := r.Read()
		if errors.Is(err, io.EOF) {
			return docs, nil
		}
		if err != nil {
			return docs, err
		}
		var m map[string]any
		if err := yaml.Unmarshal(raw, &m); err != nil {
			return docs, err
		}
		if len(m) == 0 {
			continue
		}
		u := &unstructured.Unstructured{Object: m}
		docs = append(docs, &document{Obj: u, GVK: u.GroupVersionKind()})
	}
}

// planNamespaces maps every document with mapper (the tenants' REST mapper) and chooses each
// manifest's namespace: the one its namespaced documents name explicitly (kubectl refuses a
// different -n), otherwise a test namespace per corpus directory, so files that belong
// together (whereami's ConfigMap, Deployment and Service) share one, as `kubectl apply -f dir`
// would put them.
func planNamespaces(t *testing.T, ms []*manifest, mapper meta.RESTMapper) {
	t.Helper()
	dirNS := directoryNamespaces(ms)
	for _, m := range ms {
		explicit := map[string]bool{}
		for _, d := range m.Docs {
			mapping, err := mapper.RESTMapping(d.GVK.GroupKind(), d.GVK.Version)
			if err != nil {
				continue // not served: kubectl reports "no matches for kind"
			}
			d.Mapping = mapping
			if mapping.Scope.Name() == meta.RESTScopeNameNamespace && d.Obj.GetNamespace() != "" {
				explicit[d.Obj.GetNamespace()] = true
			}
		}
		switch len(explicit) {
		case 0:
			m.Namespace = dirNS[path.Dir(m.Path)]
		case 1:
			for ns := range explicit {
				m.Namespace, m.Explicit = ns, true
			}
		default:
			t.Fatalf("%s names several namespaces %v; the test applies a file into one namespace", m.Path, keys(explicit))
		}
		for _, d := range m.Docs {
			if d.Mapping != nil && d.Mapping.Scope.Name() == meta.RESTScopeNameNamespace {
				d.Namespace = m.Namespace
			}
		}
	}
}

// directoryNamespaces names one test namespace per corpus directory: "rw-" and the
// directory's last path element (more elements when two directories end alike), cut to a
// DNS label with a hash suffix when too long.
func directoryNamespaces(ms []*manifest) map[string]string {
	var dirs []string
	seen := map[string]bool{}
	for _, m := range ms {
		if d := path.Dir(m.Path); !seen[d] {
			seen[d] = true
			dirs = append(dirs, d)
		}
	}
	sort.Strings(dirs)
	invalid := regexp.MustCompile(`[^a-z0-9-]+`)
	name := func(dir string, depth int) string {
		parts := strings.Split(dir, "/")
		if depth > len(parts) {
			depth = len(parts)
		}
		s := "rw-" + strings.Trim(invalid.ReplaceAllString(strings.ToLower(strings.Join(parts[len(parts)-depth:], "-")), "-"), "-")
		if len(s) > 40 {
			sum := sha256.Sum256([]byte(dir))
			s = strings.TrimRight(s[:33], "-") + "-" + hex.EncodeToString(sum[:])[:6]
		}
		return s
	}
	out := map[string]string{}
	for depth := 1; len(out) < len(dirs); depth++ {
		count := map[string]int{}
		for _, d := range dirs {
			if _, done := out[d]; !done {
				count[name(d, depth)]++
			}
		}
		for _, d := range dirs {
			if _, done := out[d]; !done && (count[name(d, depth)] == 1 || depth > 8) {
				out[d] = name(d, depth)
			}
		}
	}
	return out
}

func keys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
