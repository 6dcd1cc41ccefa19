package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"io"
	"path"
	"sort"
	"strings"
)

// tree is an unpacked archive: regular files by their cleaned path relative to the archive's
// root, and the directories that hold them (explicit or implied).
type tree struct {
	files map[string][]byte
	dirs  map[string]bool
}

// sortedNames keeps every later step independent of map order: same archive, same output.
func (t *tree) sortedNames() []string {
	names := make([]string, 0, len(t.files))
	for n := range t.files {
		names = append(names, n)
	}
	sort.Strings(names)
	return names
}

type link struct{ name, target string }

// unpack reads a gzip-compressed tar archive in memory. It refuses absolute paths, `..`, device
// files and links that leave the archive or point to nothing in it; a link to a regular file in
// the archive is kept as a copy of that file (nothing is ever written to disk, so a link could
// not reach outside anyway, but a chart that tries is told so). Entry count, file size and total
// size are capped while reading, so a gzip bomb stops at the cap.
func unpack(archive []byte, limits Limits) (*tree, error) {
	if int64(len(archive)) > limits.ArchiveBytes {
		return nil, overLimit(fmt.Sprintf("the archive is %d bytes, more than the limit of %d", len(archive), limits.ArchiveBytes))
	}
	gz, err := gzip.NewReader(bytes.NewReader(archive))
	if err != nil {
		return nil, invalid(fmt.Sprintf("the archive is not gzip-compressed: %v", err))
	}
	u := &unpacker{t: &tree{files: map[string][]byte{}, dirs: map[string]bool{".": true}}, limits: limits}
	tr := tar.NewReader(gz)
	for {
		hd, err := tr.Next()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, invalid(fmt.Sprintf("the archive is not a valid tar archive: %v", err))
		}
		if err := u.entry(hd, tr); err != nil {
			return nil, err
		}
	}
	if err := u.resolveLinks(); err != nil {
		return nil, err
	}
	return u.t, nil
}

type unpacker struct {
	t       *tree
	limits  Limits
	entries int
	total   int64
	links   []link
}

func (u *unpacker) entry(hd *tar.Header, r io.Reader) error {
	switch hd.Typeflag {
	case tar.TypeXGlobalHeader, tar.TypeXHeader:
		return nil
	}
	u.entries++
	if u.entries > u.limits.Files {
		return overLimit(fmt.Sprintf("the archive has more than %d entries", u.limits.Files))
	}
	name, err := cleanEntryName(hd.Name)
	if err != nil {
		return err
	}
	switch hd.Typeflag {
	case tar.TypeDir:
		return u.addDirs(name)
	case tar.TypeReg, tar.TypeRegA:
		if name == "." {
			return invalid(fmt.Sprintf("entry %q is a file without a name", hd.Name))
		}
		return u.addFile(name, hd.Size, r)
	case tar.TypeSymlink:
		return u.addSymlink(name, hd.Linkname)
	case tar.TypeLink:
		// A hard link names another entry by its path from the archive's root.
		target, err := cleanEntryName(hd.Linkname)
		if err != nil {
			return invalid(fmt.Sprintf("hard link %s: %v", name, err))
		}
		u.links = append(u.links, link{name, target})
		return nil
	default:
		return invalid(fmt.Sprintf("%s is a device, FIFO or other special file (tar type %q): only regular files, directories and links inside the archive are allowed", name, hd.Typeflag))
	}
}

func (u *unpacker) addFile(name string, size int64, r io.Reader) error {
	if size > u.limits.FileBytes {
		return overLimit(fmt.Sprintf("%s is %d bytes, more than the limit of %d per file", name, size, u.limits.FileBytes))
	}
	data, err := io.ReadAll(io.LimitReader(r, u.limits.FileBytes+1))
	if err != nil {
		return invalid(fmt.Sprintf("reading %s: %v", name, err))
	}
	if int64(len(data)) > u.limits.FileBytes {
		return overLimit(fmt.Sprintf("%s is more than the limit of %d bytes per file", name, u.limits.FileBytes))
	}
	return u.store(name, data)
}

func (u *unpacker) store(name string, data []byte) error {
	u.total += int64(len(data))
	if u.total > u.limits.TotalBytes {
		return overLimit(fmt.Sprintf("the archive unpacks to more than %d bytes", u.limits.TotalBytes))
	}
	if u.t.dirs[name] {
		return invalid(fmt.Sprintf("%s is both a file and a directory in the archive", name))
	}
	u.t.files[name] = data
	return u.addDirs(path.Dir(name))
}

// addDirs records a directory and its parents.
func (u *unpacker) addDirs(dir string) error {
	for ; dir != "."; dir = path.Dir(dir) {
		if _, isFile := u.t.files[dir]; isFile {
			return invalid(fmt.Sprintf("%s is both a file and a directory in the archive", dir))
		}
		u.t.dirs[dir] = true
	}
	return nil
}

// addSymlink keeps the link for later: its target may come after it in the archive.
func (u *unpacker) addSymlink(name, target string) error {
	if target == "" || path.IsAbs(target) || strings.Contains(target, "\\") {
		return invalid(fmt.Sprintf("symlink %s points outside the archive (%s)", name, target))
	}
	joined := path.Join(path.Dir(name), target)
	if joined == ".." || strings.HasPrefix(joined, "../") {
		return invalid(fmt.Sprintf("symlink %s points outside the archive (%s)", name, target))
	}
	u.links = append(u.links, link{name, joined})
	return nil
}

// resolveLinks turns each link into a copy of the regular file it names, following links to
// links a few steps deep.
func (u *unpacker) resolveLinks() error {
	targets := map[string]string{}
	for _, l := range u.links {
		targets[l.name] = l.target
	}
	for _, l := range u.links {
		target := l.target
		for hops := 0; ; hops++ {
			next, isLink := targets[target]
			if !isLink {
				break
			}
			if hops == 8 {
				return invalid(fmt.Sprintf("link %s: too many levels of links", l.name))
			}
			target = next
		}
		data, ok := u.t.files[target]
		switch {
		case ok:
			if err := u.store(l.name, data); err != nil {
				return err
			}
		case u.t.dirs[target]:
			return unsupported(fmt.Sprintf("link %s points to a directory (%s): only links to files are supported", l.name, target))
		default:
			return invalid(fmt.Sprintf("link %s points to nothing in the archive (%s)", l.name, target))
		}
	}
	return nil
}

// cleanEntryName refuses absolute paths, parent references, drive letters and NUL; "./a/b/"
// becomes "a/b".
func cleanEntryName(raw string) (string, error) {
	name := strings.ReplaceAll(raw, "\\", "/")
	if strings.ContainsRune(name, 0) {
		return "", invalid(fmt.Sprintf("entry %q has a NUL in its name", raw))
	}
	if path.IsAbs(name) || (len(name) > 1 && name[1] == ':') {
		return "", invalid(fmt.Sprintf("entry %q has an absolute path", raw))
	}
	for _, part := range strings.Split(name, "/") {
		if part == ".." {
			return "", invalid(fmt.Sprintf("entry %q reaches outside the archive (..)", raw))
		}
	}
	if len(name) > 4096 {
		return "", invalid(fmt.Sprintf("entry name of %d characters is too long", len(name)))
	}
	clean := path.Clean(name)
	if clean == "." {
		return ".", nil
	}
	return clean, nil
}
