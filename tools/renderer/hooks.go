package main

import (
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"

	chart "helm.sh/helm/v4/pkg/chart/v2"
	release "helm.sh/helm/v4/pkg/release/v1"
	releaseutil "helm.sh/helm/v4/pkg/release/v1/util"
)

// Hooks are mapped to an order, as Argo CD maps them to sync phases: the agent is a plain applier
// that runs no hook and waits for none, so what a chart marks as a hook is applied with the rest,
// in the place its events give it:
//
//   - pre-install / pre-upgrade hooks go before the chart's manifests (after its CRDs),
//   - post-install / post-upgrade hooks go after them,
//   - each group in Helm's execution order (weight, then name),
//   - hooks only for delete, rollback or test are left out (the agent never deletes, rolls back
//     or tests a release), as are hooks of unknown events (Helm skips those too, e.g. Helm 2's
//     crd-install).
//
// Hook annotations stay on the objects; the agent does not wait for a hook Job to complete and
// does not apply the delete policies. docs/adr/0043 records the choice.
func splitHooks(hooks []*release.Hook) (pre, post []*release.Hook) {
	for _, h := range hooks {
		switch {
		case hasEvent(h, release.HookPreInstall, release.HookPreUpgrade):
			pre = append(pre, h)
		case hasEvent(h, release.HookPostInstall, release.HookPostUpgrade):
			post = append(post, h)
		}
	}
	byWeight := func(hs []*release.Hook) {
		sort.SliceStable(hs, func(i, j int) bool {
			if hs[i].Weight == hs[j].Weight {
				return hs[i].Name < hs[j].Name
			}
			return hs[i].Weight < hs[j].Weight
		})
	}
	byWeight(pre)
	byWeight(post)
	return pre, post
}

func hasEvent(h *release.Hook, events ...release.HookEvent) bool {
	return slices.ContainsFunc(h.Events, func(e release.HookEvent) bool { return slices.Contains(events, e) })
}

// assemble writes the rendered files as one multi-document YAML, each document after a
// `# Source:` comment as `helm template` writes it. NOTES.txt is dropped. The output cap is
// checked as it grows.
func assemble(ch *chart.Chart, files map[string]string, maxBytes int64) (string, error) {
	for name := range files {
		if strings.HasSuffix(name, "NOTES.txt") {
			delete(files, name)
		}
	}
	hooks, manifests, err := releaseutil.SortManifests(files, nil, releaseutil.InstallOrder)
	if err != nil {
		return "", invalid(err.Error())
	}
	pre, post := splitHooks(hooks)
	out := &cappedBuilder{max: maxBytes}
	for _, crd := range ch.CRDObjects() {
		out.document(path.Clean(crd.Filename), string(crd.File.Data))
	}
	for _, h := range pre {
		out.document(h.Path, h.Manifest)
	}
	for _, m := range manifests {
		out.document(m.Name, m.Content)
	}
	for _, h := range post {
		out.document(h.Path, h.Manifest)
	}
	if out.over {
		return "", overLimit(fmt.Sprintf("the rendered output is larger than %d bytes", maxBytes))
	}
	return out.String(), nil
}

type cappedBuilder struct {
	strings.Builder
	max  int64
	over bool
}

func (b *cappedBuilder) document(source, content string) {
	if b.over {
		return
	}
	doc := fmt.Sprintf("---\n# Source: %s\n%s\n", source, content)
	if int64(b.Len()+len(doc)) > b.max {
		b.over = true
		return
	}
	b.WriteString(doc)
}
