/**
 * The layers engine's version as signed intent names it for plain YAML under override layers
 * (docs/signatures.md, "Override layers"): a generator signs the YAML and the layers for this
 * engine, and an agent applies them only with the same one. Raise it with any change that can make
 * the same YAML and layers come out differently (the patch libraries, how YAML is written back).
 */
export const LAYERS_ENGINE_VERSION = 'brokkr-overrides/1';
