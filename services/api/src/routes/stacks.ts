import type { AnyRoute } from '../http/route.ts';
import { deploymentObjectRoutes } from './deployment-objects.ts';
import { stackAnnotationRoutes } from './stacks-annotations.ts';
import { stackCrudRoutes } from './stacks-crud.ts';
import { stackLabelRoutes } from './stacks-labels.ts';

/** Stacks, their labels and annotations, and their deployment objects. */
export const stackRoutes: AnyRoute[] = [...stackCrudRoutes, ...stackLabelRoutes, ...stackAnnotationRoutes, ...deploymentObjectRoutes];
