package deploy

import (
	"debug/elf"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// instruction is one Dockerfile instruction with its continuation lines joined.
type instruction struct {
	Line int    // 1-based line of the instruction's first line
	Cmd  string // upper-case keyword: FROM, RUN, ...
	Args string
}

// parseDockerfile splits a Dockerfile into instructions (comments and blank lines dropped,
// backslash continuations joined). It covers the syntax this repository's Dockerfile uses; the
// npm linter dockerfile-utils checks the full syntax.
func parseDockerfile(src string) []instruction {
	var out []instruction
	var cur *instruction
	for i, line := range strings.Split(src, "\n") {
		trimmed := strings.TrimSpace(line)
		if cur == nil && (trimmed == "" || strings.HasPrefix(trimmed, "#")) {
			continue
		}
		cont := strings.HasSuffix(trimmed, "\\")
		trimmed = strings.TrimSuffix(trimmed, "\\")
		if cur == nil {
			kw, rest, _ := strings.Cut(trimmed, " ")
			cur = &instruction{Line: i + 1, Cmd: strings.ToUpper(kw), Args: strings.TrimSpace(rest)}
		} else {
			cur.Args = strings.TrimSpace(cur.Args + " " + trimmed)
		}
		if !cont {
			out = append(out, *cur)
			cur = nil
		}
	}
	return out
}

// dockerfileRules returns the violations of the image rules: multi-stage, a final
// stage on distroless static running as a non-root numeric user, exec-form ENTRYPOINT, pinned
// base images, and a build stage that compiles with CGO_ENABLED=0. It also returns the build
// stage's `go build` command.
func dockerfileRules(ins []instruction) (problems []string, goBuild string) {
	var froms []instruction
	final := -1
	for i, in := range ins {
		if in.Cmd == "FROM" {
			froms = append(froms, in)
			final = i
		}
	}
	if len(froms) < 2 {
		problems = append(problems, fmt.Sprintf("want a multi-stage build, found %d FROM", len(froms)))
	}
	for _, f := range froms {
		img := strings.Fields(f.Args)[0]
		if _, tag, ok := strings.Cut(img[strings.LastIndex(img, "/")+1:], ":"); !ok || tag == "latest" {
			problems = append(problems, fmt.Sprintf("line %d: base image %s is not pinned to a tag", f.Line, img))
		}
	}
	if final >= 0 {
		img := strings.Fields(ins[final].Args)[0]
		if !strings.HasPrefix(img, "gcr.io/distroless/static") {
			problems = append(problems, fmt.Sprintf("line %d: final stage %s is not distroless static", ins[final].Line, img))
		}
		user := ""
		for _, in := range ins[final+1:] {
			switch in.Cmd {
			case "USER":
				user = in.Args
			case "RUN":
				problems = append(problems, fmt.Sprintf("line %d: RUN in the final stage (distroless has no shell)", in.Line))
			case "ENTRYPOINT":
				if !strings.HasPrefix(in.Args, "[") {
					problems = append(problems, fmt.Sprintf("line %d: ENTRYPOINT is not in exec form", in.Line))
				}
			}
		}
		uid, _, _ := strings.Cut(user, ":")
		if n, err := strconv.Atoi(uid); err != nil || n == 0 {
			problems = append(problems, fmt.Sprintf("final stage USER %q is not a numeric non-root user", user))
		}
	}
	for _, in := range ins {
		if in.Cmd == "RUN" && strings.Contains(in.Args, "go build") {
			goBuild = in.Args
		}
	}
	if !strings.HasPrefix(goBuild, "CGO_ENABLED=0 go build ") {
		problems = append(problems, fmt.Sprintf("the build stage's go build %q does not start with CGO_ENABLED=0 go build", goBuild))
	}
	return problems, goBuild
}

// shellWords splits a command line into words, honouring double quotes and expanding ${NAME}
// from vars (build ARGs). It is enough for the Dockerfile's one RUN line.
func shellWords(s string, vars map[string]string) []string {
	var out []string
	var b strings.Builder
	inQuote, inWord := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c == '"':
			inQuote, inWord = !inQuote, true
		case c == ' ' && !inQuote:
			if inWord {
				out = append(out, b.String())
				b.Reset()
				inWord = false
			}
		case c == '$' && i+1 < len(s) && s[i+1] == '{':
			end := strings.IndexByte(s[i:], '}')
			b.WriteString(vars[s[i+2:i+end]])
			i += end
			inWord = true
		default:
			b.WriteByte(c)
			inWord = true
		}
	}
	if inWord {
		out = append(out, b.String())
	}
	return out
}

// TestVerifyDockerfile lints the Dockerfile with the npm linter dockerfile-utils (from `make
// tools`), checks the image rules, then runs the Dockerfile's own `go build` command (its -o
// redirected to a temporary file) and checks the binary is static: no ELF interpreter and no
// shared libraries, which a distroless static image needs.
func TestVerifyDockerfile(t *testing.T) {
	path := filepath.Join(repoRootDir, "Dockerfile")
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	lint := tool(t, "dockerfile-utils")
	t.Run("dockerfile-utils lint", func(t *testing.T) {
		out, err := run(lint, nil, "lint", path)
		if err != nil || strings.TrimSpace(string(out)) != "" {
			t.Errorf("dockerfile-utils lint Dockerfile: err %v, output:\n%s", err, out)
		}
		bad := filepath.Join(t.TempDir(), "Dockerfile")
		if err := os.WriteFile(bad, []byte("FROM golang:1.26 AS a\nFROM scratch AS a\nEXPOSE 8080/xyz\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		if out, err := run(lint, nil, "lint", bad); err == nil {
			t.Errorf("the linter accepted a broken Dockerfile:\n%s", out)
		}
	})

	problems, goBuild := dockerfileRules(parseDockerfile(string(src)))
	for _, p := range problems {
		t.Errorf("Dockerfile: %s", p)
	}
	t.Run("rules catch a bad Dockerfile", func(t *testing.T) {
		bad, _ := dockerfileRules(parseDockerfile("FROM ubuntu\nRUN go build -o /x .\nENTRYPOINT /x\n"))
		if len(bad) < 4 {
			t.Errorf("want at least 4 problems (single stage, unpinned, not distroless, no user, cgo), got %q", bad)
		}
	})

	t.Run("static binary from the Dockerfile's go build", func(t *testing.T) {
		if goBuild == "" {
			t.Fatal("no go build in the Dockerfile")
		}
		vars := map[string]string{"VERSION": "verify", "GIT_COMMIT": "verify"}
		words := shellWords(goBuild, vars)
		var env []string
		for len(words) > 0 && strings.Contains(words[0], "=") {
			env = append(env, words[0])
			words = words[1:]
		}
		if len(words) < 2 || words[0] != "go" || words[1] != "build" {
			t.Fatalf("cannot run %q", goBuild)
		}
		bin := filepath.Join(t.TempDir(), "vc-syncer")
		outFlag := false
		for i, w := range words {
			if w == "-o" && i+1 < len(words) {
				words[i+1], outFlag = bin, true
			}
		}
		if !outFlag {
			t.Fatalf("go build %q has no -o", goBuild)
		}
		cmd := exec.Command("go", words[1:]...)
		cmd.Dir = repoRootDir
		cmd.Env = append(os.Environ(), env...)
		if out, err := cmd.CombinedOutput(); err != nil {
			t.Fatalf("%s: %v\n%s", goBuild, err, out)
		}
		f, err := elf.Open(bin)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		for _, p := range f.Progs {
			if p.Type == elf.PT_INTERP {
				t.Error("the binary has an ELF interpreter (dynamically linked)")
			}
		}
		if libs, err := f.ImportedLibraries(); err != nil || len(libs) > 0 {
			t.Errorf("the binary needs shared libraries %v (err %v)", libs, err)
		}
		if file, err := exec.LookPath("file"); err == nil {
			out, _ := exec.Command(file, bin).Output()
			if !strings.Contains(string(out), "statically linked") {
				t.Errorf("file(1) says: %s", out)
			}
		}
		out, err := exec.Command(bin, "version").CombinedOutput()
		if err != nil || !strings.Contains(string(out), "verify") {
			t.Errorf("%s version: %v %s (want the -X version stamp)", bin, err, out)
		}
	})
}

// TestVerifyDockerignore checks that .dockerignore keeps every package `go build
// ./cmd/vc-syncer` compiles (the binary imports pkg/localcluster for `vc-syncer dev`).
func TestVerifyDockerignore(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(repoRootDir, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("go", "list", "-deps", "-f", "{{if not .Standard}}{{.ImportPath}}{{end}}", "github.com/vcsyncer/syncer/cmd/vc-syncer").Output()
	if err != nil {
		t.Fatal(err)
	}
	const mod = "github.com/vcsyncer/syncer/"
	for _, pkg := range strings.Fields(string(out)) {
		if !strings.HasPrefix(pkg, mod) {
			continue
		}
		dir := strings.TrimPrefix(pkg, mod)
		for _, pat := range strings.Split(string(data), "\n") {
			pat = strings.TrimSpace(pat)
			if pat == "" || strings.HasPrefix(pat, "#") || strings.HasPrefix(pat, "!") {
				continue
			}
			for p := dir; p != "."; p = filepath.Dir(p) {
				if ok, _ := filepath.Match(pat, p); ok {
					t.Errorf(".dockerignore pattern %q drops %s, which the binary imports", pat, dir)
				}
			}
		}
	}
}
