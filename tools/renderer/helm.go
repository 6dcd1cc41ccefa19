package main

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"sort"
	"strings"

	"sigs.k8s.io/yaml"

	"helm.sh/helm/v4/pkg/chart/common"
	"helm.sh/helm/v4/pkg/chart/common/util"
	"helm.sh/helm/v4/pkg/chart/loader/archive"
	chart "helm.sh/helm/v4/pkg/chart/v2"
	chartloader "helm.sh/helm/v4/pkg/chart/v2/loader"
	chartutil "helm.sh/helm/v4/pkg/chart/v2/util"
	"helm.sh/helm/v4/pkg/engine"
)

// errLookup is what a chart's `lookup` gets: an empty answer (Helm's client-only behaviour)
// would silently render something else than the cluster would get.
var errLookup = errors.New("lookup is not supported: the hub renders without a cluster")

// renderHelm is `helm template` with Helm's own loader and engine, with the semantics of an
// install: CRDs from crds/ first, then the manifests in Helm's install order, with the hooks
// placed around them (hooks.go).
func renderHelm(job *Job) Result {
	ch, err := loadChart(job)
	if err != nil {
		return failureFrom(err)
	}
	values, err := renderValues(ch, job)
	if err != nil {
		return failureFrom(err)
	}
	e := engine.Engine{
		EnableDNS: false,
		CustomTemplateFuncs: map[string]any{
			"lookup": func(string, string, string, string) (map[string]any, error) { return nil, errLookup },
		},
	}
	files, err := e.RenderWithContext(context.Background(), ch, values)
	if err != nil {
		if strings.Contains(err.Error(), errLookup.Error()) {
			return failure(reasonUnsupported, err.Error())
		}
		return failure(reasonInvalid, err.Error())
	}
	out, err := assemble(ch, files, job.Limits.OutputBytes)
	if err != nil {
		return failureFrom(err)
	}
	return success(out)
}

// loadChart unpacks the archive in memory and hands its files to Helm's v2 chart loader
// (apiVersion v1 and v2 charts), as Helm's own archive loader would: the first path component
// (the chart's directory) is dropped and a UTF-8 byte-order mark is trimmed.
func loadChart(job *Job) (*chart.Chart, error) {
	t, err := unpack(job.Archive, job.Limits)
	if err != nil {
		return nil, err
	}
	var files []*archive.BufferedFile
	for _, name := range t.sortedNames() {
		parts := strings.SplitN(name, "/", 2)
		if len(parts) < 2 {
			if name == "Chart.yaml" {
				return nil, invalid("Chart.yaml is not in the chart's directory (a chart archive holds one directory, <chart>/Chart.yaml)")
			}
			continue
		}
		files = append(files, &archive.BufferedFile{Name: parts[1], Data: trimBOM(t.files[name])})
	}
	if err := checkChartAPIVersion(files); err != nil {
		return nil, err
	}
	ch, err := chartloader.LoadFiles(files)
	if err != nil {
		return nil, invalid(fmt.Sprintf("the chart cannot be loaded: %v", err))
	}
	if err := checkVendored(ch); err != nil {
		return nil, err
	}
	return ch, nil
}

func trimBOM(b []byte) []byte {
	return []byte(strings.TrimPrefix(string(b), "\xEF\xBB\xBF"))
}

// checkChartAPIVersion: Helm v4's apiVersion v3 charts load through an internal package; they
// are refused until Helm makes that loader public.
func checkChartAPIVersion(files []*archive.BufferedFile) error {
	for _, f := range files {
		if f.Name != "Chart.yaml" {
			continue
		}
		var head struct {
			APIVersion string `json:"apiVersion"`
		}
		if err := yaml.Unmarshal(f.Data, &head); err != nil {
			return invalid(fmt.Sprintf("cannot load Chart.yaml: %v", err))
		}
		switch head.APIVersion {
		case chart.APIVersionV1, chart.APIVersionV2, "":
			return nil
		default:
			return unsupported(fmt.Sprintf("chart apiVersion %q is not supported (v1 and v2 are)", head.APIVersion))
		}
	}
	return invalid("the archive holds no Chart.yaml")
}

// checkVendored: the hub fetches nothing while rendering, so a dependency must be packaged in
// charts/ (`helm dependency build` before `helm package`), at every level.
func checkVendored(ch *chart.Chart) error {
	var missing []string
	for _, dep := range ch.Metadata.Dependencies {
		if !slices.ContainsFunc(ch.Dependencies(), func(c *chart.Chart) bool { return c.Name() == dep.Name }) {
			missing = append(missing, dep.Name)
		}
	}
	if len(missing) > 0 {
		return invalid(fmt.Sprintf("chart %s: dependencies not vendored: %s (found in Chart.yaml, but missing in charts/; run `helm dependency build` before packaging)",
			ch.ChartFullPath(), strings.Join(missing, ", ")))
	}
	for _, sub := range ch.Dependencies() {
		if err := checkVendored(sub); err != nil {
			return err
		}
	}
	return nil
}

// renderValues is what `helm template` passes to the engine: dependencies enabled by their
// conditions and tags, the job's values over the chart's, validated against the charts' schemas
// (schema.go, without reaching files or the network), .Release as for an install, and
// .Capabilities from the cluster's agent.
func renderValues(ch *chart.Chart, job *Job) (common.Values, error) {
	vals := job.Values
	if vals == nil {
		vals = map[string]any{}
	}
	if err := chartutil.ProcessDependencies(ch, vals); err != nil {
		return nil, invalid(fmt.Sprintf("chart dependencies processing failed: %v", err))
	}
	caps, err := capabilities(job.Capabilities)
	if err != nil {
		return nil, err
	}
	if ch.Metadata.KubeVersion != "" && !chartutil.IsCompatibleRange(ch.Metadata.KubeVersion, caps.KubeVersion.String()) {
		return nil, invalid(fmt.Sprintf("chart requires kubeVersion: %s which is incompatible with Kubernetes %s", ch.Metadata.KubeVersion, caps.KubeVersion.Version))
	}
	options := common.ReleaseOptions{Name: job.Release.Name, Namespace: job.Release.Namespace, Revision: 1, IsInstall: true}
	top, err := util.ToRenderValuesWithSchemaValidation(ch, vals, options, caps, true)
	if err != nil {
		return nil, invalid(err.Error())
	}
	if err := validateSchemas(ch, top["Values"].(common.Values)); err != nil {
		return nil, err
	}
	return top, nil
}

func capabilities(c *Capabilities) (*common.Capabilities, error) {
	caps := common.DefaultCapabilities.Copy()
	if c == nil {
		return caps, nil
	}
	kv, err := common.ParseKubeVersion(c.KubeVersion)
	if err != nil {
		return nil, invalid(fmt.Sprintf("capabilities.kubeVersion %q: %v", c.KubeVersion, err))
	}
	caps.KubeVersion = *kv
	// Sorted and without repeats: a template that ranges over them gets the same order whatever
	// order the agent reported them in.
	versions := slices.Clone(c.APIVersions)
	sort.Strings(versions)
	caps.APIVersions = common.VersionSet(slices.Compact(versions))
	return caps, nil
}
