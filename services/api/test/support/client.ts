/**
 * The api tests' HTTP client is the testkit's `TestClient` (same constructor: base URL, PAK, and
 * the /api/v1 prefix by default); the old names stay so the tests read as before.
 */
export { TestClient as ApiClient, type ClientResponse as ApiResponse, type RequestOptions } from '@brokkr/testkit';
