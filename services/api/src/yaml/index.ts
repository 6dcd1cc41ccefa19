export { validateDeploymentYaml, type YamlVerdict, type ValidateOptions } from './validate.ts';
export { DEFAULT_YAML_LIMITS, type YamlLimits, type LimitExceeded, type LimitName } from './limits.ts';
export {
  createYamlValidator,
  YamlValidatorBusy,
  YamlValidatorClosed,
  type YamlValidator,
  type YamlValidatorOptions,
} from './validator-pool.ts';
export { decodeUtf8 } from './decode.ts';
export { isYamlContentType, acceptsYaml, YAML_MEDIA_TYPES } from './media-types.ts';
export { yamlChecksum } from './checksum.ts';
