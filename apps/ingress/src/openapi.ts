import type { NestExpressApplication } from '@nestjs/platform-express';
import { DocumentBuilder, SwaggerModule } from '@nestjs/swagger';

/** OpenAPI for the HTTP API: the UI at `/docs`, the document at `/docs/openapi.json`. */
export function mountOpenApi(app: NestExpressApplication): void {
  const document = SwaggerModule.createDocument(
    app,
    new DocumentBuilder()
      .setTitle('Chorus')
      .setDescription(
        'Message-bus choreography for multi-agent workflows. Submit a query, follow its workflow ' +
          '(poll, or stream its events), read its audit trail. With API keys configured, every /v1 ' +
          "request needs one and sees only its tenant's workflows.",
      )
      .setVersion('0.1.0')
      .addBearerAuth({ type: 'http', scheme: 'bearer', description: 'An API key' }, 'bearer')
      .addApiKey({ type: 'apiKey', in: 'header', name: 'X-API-Key' }, 'api-key')
      .addSecurityRequirements('bearer')
      .build(),
  );
  SwaggerModule.setup('docs', app, document, { jsonDocumentUrl: 'docs/openapi.json' });
}
