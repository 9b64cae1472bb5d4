/**
 * The sign-in pages of an interaction (sessions/sign-in/step-forms.ts): GET shows the page of the
 * current step; each step's form posts to its own path.
 */
import type { FastifyInstance } from 'fastify';
import { PASSKEY_FORMS } from '../sessions/sign-in/passkey-forms.ts';
import { POSTED_STEPS, type StepForms } from '../sessions/sign-in/step-forms.ts';
import type { FlowAdapter } from './shared/flow-adapter.ts';
import { singleValued } from './shared/params.ts';

export interface InteractionRouteOptions {
  forms: StepForms;
  adapter: FlowAdapter;
}

type IdParams = { Params: { id: string } };

export async function interactionRoutes(app: FastifyInstance, { forms, adapter }: InteractionRouteOptions): Promise<void> {
  const config = { page: true };
  app.get<IdParams>('/interaction/:id', { config }, async (request, reply) =>
    adapter.send(reply, await forms.view(adapter.browserRequest(request), request.params.id)));
  // "Use a recovery code": the second-factor step's other form.
  app.get<IdParams>('/interaction/:id/recovery', { config }, async (request, reply) =>
    adapter.send(reply, await forms.viewRecovery(adapter.browserRequest(request), request.params.id)));
  for (const step of [...POSTED_STEPS, ...PASSKEY_FORMS]) {
    app.post<IdParams>(`/interaction/:id/${step}`, { config }, async (request, reply) => {
      const form = singleValued(request.body);
      return adapter.send(reply, await forms[step](adapter.browserRequest(request), request.params.id, form));
    });
  }
}
