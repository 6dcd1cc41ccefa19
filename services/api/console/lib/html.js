// One place that binds htm to preact, so pages import `html` and hooks from here.
import { h } from 'preact';
import htm from 'htm';

export const html = htm.bind(h);
export { render } from 'preact';
export { useCallback, useEffect, useMemo, useRef, useState } from 'preact/hooks';
