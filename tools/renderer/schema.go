package main

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/santhosh-tekuri/jsonschema/v6"

	"helm.sh/helm/v4/pkg/chart/common"
	chart "helm.sh/helm/v4/pkg/chart/v2"
)

// validateSchemas is Helm's ValidateAgainstSchema (pkg/chart/common/util/jsonschema.go) with one
// difference: a values.schema.json is compiled with no loader for file:, http: or https: $refs.
// Helm's loads them, so a chart's schema could read a file of the host (file:///…) or make the
// hub fetch a URL. urn: references stay permissive, as in Helm.
func validateSchemas(ch *chart.Chart, values common.Values) error {
	var problems strings.Builder
	if err := collectProblems(ch, values, &problems); err != nil {
		return err
	}
	if problems.Len() > 0 {
		return invalid("values don't meet the specifications of the schema(s) in the following chart(s):\n" + problems.String())
	}
	return nil
}

// collectProblems writes each chart's validation errors, as Helm lists them; it returns an error
// only for a schema that cannot be used at all (a refused $ref).
func collectProblems(ch *chart.Chart, values common.Values, problems *strings.Builder) error {
	if ch.Schema != nil {
		if err := validateOne(values, ch.Schema); err != nil {
			if _, refused := err.(*renderError); refused {
				return err
			}
			fmt.Fprintf(problems, "%s:\n%s\n", ch.Name(), err)
		}
	}
	for _, sub := range ch.Dependencies() {
		raw, ok := values[sub.Name()]
		if !ok || raw == nil {
			continue
		}
		subValues, ok := raw.(map[string]any)
		if !ok {
			fmt.Fprintf(problems, "%s:\ninvalid type for values: expected object (map), got %T\n", sub.Name(), raw)
			continue
		}
		if err := collectProblems(sub, subValues, problems); err != nil {
			return err
		}
	}
	return nil
}

func validateOne(values common.Values, schemaJSON []byte) (err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("unable to validate schema: %v", r)
		}
	}()
	schema, err := jsonschema.UnmarshalJSON(bytes.NewReader(schemaJSON))
	if err != nil {
		return err
	}
	compiler := jsonschema.NewCompiler()
	compiler.UseLoader(jsonschema.SchemeURLLoader{
		"file":  refusingLoader{},
		"http":  refusingLoader{},
		"https": refusingLoader{},
		"urn":   permissiveLoader{},
	})
	if err := compiler.AddResource("file:///values.schema.json", schema); err != nil {
		return err
	}
	validator, err := compiler.Compile("file:///values.schema.json")
	if err != nil {
		if strings.Contains(err.Error(), refusedRef) {
			return unsupported(fmt.Sprintf("values.schema.json: %v", err))
		}
		return err
	}
	if err := validator.Validate(values.AsMap()); err != nil {
		return fmt.Errorf("%s", strings.TrimPrefix(err.Error(), "jsonschema validation failed with 'file:///values.schema.json#'\n"))
	}
	return nil
}

const refusedRef = "references outside values.schema.json are not supported: the hub renders without files or a network"

type refusingLoader struct{}

func (refusingLoader) Load(url string) (any, error) {
	return nil, fmt.Errorf("%s (%s)", refusedRef, url)
}

type permissiveLoader struct{}

func (permissiveLoader) Load(string) (any, error) { return true, nil }
