/**
 * The engine's version as signed intent names it (docs/signatures.md, "Templates"): a generator
 * signs a template's inputs for this engine and an agent renders them only with the same one.
 * Raise it with any change that can make the same template and parameters render differently.
 */
export const TEMPLATE_ENGINE_VERSION = 'brokkr-templates/1';
