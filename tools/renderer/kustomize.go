package main

import (
	"fmt"
	"path"
	"strings"

	"sigs.k8s.io/kustomize/api/konfig"
	"sigs.k8s.io/kustomize/api/krusty"
	"sigs.k8s.io/kustomize/api/types"
	"sigs.k8s.io/kustomize/kyaml/filesys"
	"sigs.k8s.io/yaml"
)

// renderKustomize is `kustomize build <path>` on an in-memory copy of the archive: files load
// only from inside their kustomization's directory (LoadRestrictionsRootOnly), only builtin
// generators and transformers run (no exec or KRM-function plugins), Helm inflation is off, and
// every resource, base and component must be a file or directory in the archive (checked first,
// so a URL or git reference gets a clear error instead of a clone attempt).
func renderKustomize(job *Job) Result {
	t, err := unpack(job.Archive, job.Limits)
	if err != nil {
		return failureFrom(err)
	}
	root, err := overlayPath(job.Path)
	if err != nil {
		return failureFrom(err)
	}
	if err := checkLocal(t, root, map[string]bool{}); err != nil {
		return failureFrom(err)
	}
	fs, err := inMemory(t)
	if err != nil {
		return failureFrom(err)
	}
	opts := krusty.MakeDefaultOptions()
	opts.LoadRestrictions = types.LoadRestrictionsRootOnly
	opts.PluginConfig = types.DisabledPluginConfig()
	opts.PluginConfig.HelmConfig.Enabled = false
	resources, err := krusty.MakeKustomizer(opts).Run(fs, path.Join("/", root))
	if err != nil {
		return failure(kustomizeReason(err), err.Error())
	}
	out, err := resources.AsYaml()
	if err != nil {
		return failure(reasonInvalid, err.Error())
	}
	if int64(len(out)) > job.Limits.OutputBytes {
		return failure(reasonLimit, fmt.Sprintf("the rendered output is larger than %d bytes", job.Limits.OutputBytes))
	}
	return success(string(out))
}

func kustomizeReason(err error) string {
	msg := err.Error()
	if strings.Contains(msg, "only builtin plugins") || strings.Contains(msg, "external plugins disabled") ||
		strings.Contains(msg, noNetwork) || strings.Contains(msg, "--enable-helm") {
		return reasonUnsupported
	}
	return reasonInvalid
}

func overlayPath(p string) (string, error) {
	if p == "" {
		return ".", nil
	}
	clean, err := cleanEntryName(p)
	if err != nil {
		return "", invalid(fmt.Sprintf("path %q: %v", p, err))
	}
	return clean, nil
}

func inMemory(t *tree) (filesys.FileSystem, error) {
	fs := filesys.MakeFsInMemory()
	for dir := range t.dirs {
		if err := fs.MkdirAll("/" + dir); err != nil {
			return nil, invalid(err.Error())
		}
	}
	for _, name := range t.sortedNames() {
		if err := fs.WriteFile("/"+name, t.files[name]); err != nil {
			return nil, invalid(err.Error())
		}
	}
	return fs, nil
}

// kustomizationIn is the kustomization file of a directory of the archive, if it has one.
func kustomizationIn(t *tree, dir string) (string, []byte) {
	for _, name := range konfig.RecognizedKustomizationFileNames() {
		p := path.Join(dir, name)
		if data, ok := t.files[p]; ok {
			return p, data
		}
	}
	return "", nil
}

// checkLocal walks the kustomizations reachable from dir and refuses what kustomize would fetch
// (a URL, a git repository) or run (Helm inflation). A plugin is left to kustomize, which refuses
// any that is not builtin.
func checkLocal(t *tree, dir string, seen map[string]bool) error {
	if seen[dir] {
		return nil
	}
	seen[dir] = true
	file, data := kustomizationIn(t, dir)
	if file == "" {
		return invalid(fmt.Sprintf("no kustomization.yaml, kustomization.yml or Kustomization in %s", dir))
	}
	var k types.Kustomization
	if err := yaml.Unmarshal(data, &k); err != nil {
		return invalid(fmt.Sprintf("%s: %v", file, err))
	}
	if len(k.HelmCharts) > 0 || len(k.HelmChartInflationGenerator) > 0 || k.HelmGlobals != nil {
		return unsupported(fmt.Sprintf("%s: helmCharts are not supported: render the chart as its own Helm source", file))
	}
	for _, field := range []struct {
		name    string
		entries []string
	}{{"resources", k.Resources}, {"bases", k.Bases}, {"components", k.Components}} {
		for _, entry := range field.entries {
			if err := checkEntry(t, dir, file, field.name, entry, seen); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkEntry(t *tree, dir, file, field, entry string, seen map[string]bool) error {
	if looksRemote(entry) {
		return unsupported(fmt.Sprintf("%s: %s entry %q is remote: remote bases and resources (URLs, git repositories) are not supported; put them in the archive", file, field, entry))
	}
	target := path.Join(dir, entry)
	if path.IsAbs(entry) || target == ".." || strings.HasPrefix(target, "../") {
		return invalid(fmt.Sprintf("%s: %s entry %q is outside the archive", file, field, entry))
	}
	if _, isFile := t.files[target]; isFile {
		return nil
	}
	if t.dirs[target] {
		return checkLocal(t, target, seen)
	}
	return invalid(fmt.Sprintf("%s: %s entry %q is not a file or directory in the archive (remote bases are not supported)", file, field, entry))
}

// looksRemote recognises what kustomize would treat as a URL or a git repository: a scheme, an
// scp-like git address, or a host-like first path element with a ref.
func looksRemote(entry string) bool {
	lower := strings.ToLower(entry)
	return strings.Contains(lower, "://") || strings.HasPrefix(lower, "git@") ||
		strings.Contains(lower, "?ref=") || strings.Contains(lower, "?version=") ||
		strings.HasPrefix(lower, "github.com/") || strings.HasPrefix(lower, "gitlab.com/") ||
		strings.HasPrefix(lower, "bitbucket.org/") || strings.Contains(lower, ".git//") ||
		strings.HasSuffix(lower, ".git")
}
