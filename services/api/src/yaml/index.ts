export { validateDeploymentYaml, MAX_ALIAS_COUNT, type YamlVerdict, type ValidateOptions } from './validate.ts';
export { decodeUtf8 } from './decode.ts';
export { isYamlContentType, acceptsYaml, YAML_MEDIA_TYPES } from './media-types.ts';
export { yamlChecksum } from './checksum.ts';
