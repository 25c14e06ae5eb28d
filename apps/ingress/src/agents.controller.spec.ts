import { JetStreamApiCodes, JetStreamApiError } from '@nats-io/jetstream';
import { ServiceUnavailableException } from '@nestjs/common';
import { AgentsController } from './agents.controller';

/** The controller's consumer listing alone, over a stream manager that fails as told. */
function controllerListing(list: () => AsyncIterable<unknown>): { consumers(): Promise<unknown> } {
  const controller = Object.create(AgentsController.prototype) as { bus: unknown; consumers(): Promise<unknown> };
  controller.bus = { options: { workflowStream: 'CHORUS_WF' }, jsm: { consumers: { list } } };
  return controller;
}

function failing(message: string): () => AsyncIterable<unknown> {
  return () => ({
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        // As the client throws it: the server's API error, with its code.
        throw message === 'stream not found' ? new JetStreamApiError({ err_code: JetStreamApiCodes.StreamNotFound, description: message, code: 404 }) : new Error(message);
      },
    }),
  });
}

describe('AgentsController', () => {
  it('AgentsController - a workflow stream missing on the server is a 503 naming it, not a 500', async () => {
    // nats-server restarted without its store: GET /v1/agents answered 500 "internal error".
    const read = controllerListing(failing('stream not found')).consumers();
    await expect(read).rejects.toBeInstanceOf(ServiceUnavailableException);
    await expect(controllerListing(failing('stream not found')).consumers()).rejects.toThrow(/the workflow stream CHORUS_WF does not exist on the NATS server/);
  });

  it('AgentsController - other failures are left to the error filter', async () => {
    await expect(controllerListing(failing('timeout')).consumers()).rejects.toThrow('timeout');
  });
});
