<?php

declare(strict_types=1);

namespace Pagamentos\Exception;

use Pagamentos\Response;

/**
 * The API answered with an error. Subclasses name the family; every one carries what the
 * error envelope `{"error": {code, message, correlationId, param?, details?}}` said.
 *
 * `getMessage()` is the API's message and `getCode()` the HTTP status (PHP reserves
 * `getCode()` for an integer); the API's own code is `$errorCode`.
 */
class ApiException extends \RuntimeException implements PagamentosException
{
    /**
     * @param int $status HTTP status of the answer
     * @param string|null $errorCode the API's code, e.g. VALIDATION_ERROR (null when the body was no envelope)
     * @param string|null $correlationId quote it to support; also in the X-Correlation-Id header
     * @param string|null $param the request field at fault, dotted (e.g. `customer.email`)
     * @param mixed $details extra structured information the API gave, if any
     * @param float|null $retryAfter seconds the API asked to wait (Retry-After), if it said
     * @param string|null $idempotencyKey the key the request carried: retry later with the same one
     * @param Response $response the raw answer (status, headers, body)
     */
    final public function __construct(
        string $message,
        public readonly int $status,
        public readonly ?string $errorCode,
        public readonly ?string $correlationId,
        public readonly ?string $param,
        public readonly mixed $details,
        public readonly ?float $retryAfter,
        public readonly ?string $idempotencyKey,
        public readonly Response $response,
    ) {
        parent::__construct($message, $status);
    }

    /**
     * The exception for an error answer: the family comes from the API's code, or from the
     * HTTP status when the body is not the envelope (a proxy's HTML 502, say).
     */
    public static function fromResponse(Response $response): self
    {
        $decoded = json_decode($response->body, true);
        $error = is_array($decoded) && is_array($decoded['error'] ?? null) ? $decoded['error'] : [];
        $code = is_string($error['code'] ?? null) ? $error['code'] : null;
        $message = is_string($error['message'] ?? null)
            ? $error['message']
            : sprintf('The API answered HTTP %d without an error envelope.', $response->status);
        $correlationId = is_string($error['correlationId'] ?? null)
            ? $error['correlationId']
            : $response->correlationId;
        $param = is_string($error['param'] ?? null) ? $error['param'] : null;

        $class = self::familyOf($response->status, $code);
        return new $class(
            $message,
            $response->status,
            $code,
            $correlationId,
            $param,
            $error['details'] ?? null,
            $response->retryAfterSeconds(),
            $response->idempotencyKey,
            $response,
        );
    }

    /** @return class-string<ApiException> */
    private static function familyOf(int $status, ?string $code): string
    {
        return match (true) {
            $code === 'IDEMPOTENCY_KEY_IN_USE', $code === 'IDEMPOTENCY_KEY_REUSED' => IdempotencyException::class,
            $code === 'INVALID_STATE' => InvalidStateException::class,
            $code === 'UNPROCESSABLE' => UnprocessableException::class,
            $status === 401 => AuthenticationException::class,
            $status === 403 => PermissionException::class,
            $status === 404 => NotFoundException::class,
            $status === 409 => InvalidStateException::class,
            $status === 422 => UnprocessableException::class,
            $status === 429 => RateLimitException::class,
            $status >= 500 => ServerException::class,
            $status >= 400 => InvalidRequestException::class,
            default => UnexpectedResponseException::class,
        };
    }
}
