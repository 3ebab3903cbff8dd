<?php

declare(strict_types=1);

namespace Pagamentos\Service;

use Pagamentos\Client;
use Pagamentos\Exception\InvalidArgumentException;
use Pagamentos\Exception\InvalidShapeException;
use Pagamentos\Exception\UnexpectedResponseException;
use Pagamentos\Page;
use Pagamentos\Resource\ApiResource;
use Pagamentos\Response;

/**
 * What every resource service shares: a resource is a small class that names its paths and
 * its object class and calls these.
 */
abstract class AbstractService
{
    public function __construct(protected readonly Client $client)
    {
    }

    /**
     * Sends the request and reads the answer as one object.
     *
     * @template T of ApiResource
     * @param class-string<T> $class
     * @param array<string, mixed>|null $params
     * @param array<string, mixed> $options
     * @return T
     */
    protected function requestObject(string $class, string $method, string $path, ?array $params, array $options)
    {
        $response = $this->client->request($method, $path, $params, $options);
        return self::read($response, static fn () => new $class($response->json(), $response));
    }

    /**
     * Lists one page; the page fetches the following ones with the same parameters and options.
     *
     * @template T of ApiResource
     * @param class-string<T> $class
     * @param array<string, mixed> $params
     * @param array<string, mixed> $options
     * @return Page<T>
     */
    protected function requestPage(string $class, string $path, array $params, array $options): Page
    {
        $response = $this->client->request('GET', $path, $params, $options);
        return self::read($response, function () use ($class, $path, $params, $options, $response): Page {
            $body = $response->json();
            if (($body['object'] ?? null) !== 'list' || !is_bool($body['hasMore'] ?? null)) {
                throw new InvalidShapeException('A list answer should have object "list" and a boolean hasMore.');
            }
            $data = is_array($body['data'] ?? null) && array_is_list($body['data']) ? $body['data'] : null;
            if ($data === null) {
                throw new InvalidShapeException('A list answer should have a list in data.');
            }
            $items = [];
            foreach ($data as $item) {
                if (!is_array($item)) {
                    throw new InvalidShapeException('A list item is not an object.');
                }
                $items[] = new $class($item);
            }
            return new Page(
                $items,
                $body['hasMore'],
                $response,
                $params,
                fn (array $next): Page => $this->requestPage($class, $path, $next, $options),
            );
        });
    }

    /** The path with each id URL-encoded in place of a %s; an empty id is refused before sending. */
    protected static function path(string $format, string ...$ids): string
    {
        foreach ($ids as $id) {
            if (trim($id) === '') {
                throw new InvalidArgumentException('The id is empty.');
            }
        }
        return sprintf($format, ...array_map('rawurlencode', $ids));
    }

    /**
     * @template R
     * @param \Closure(): R $build
     * @return R
     */
    private static function read(Response $response, \Closure $build)
    {
        try {
            return $build();
        } catch (InvalidShapeException $e) {
            throw UnexpectedResponseException::because($response, 'Unexpected answer: ' . $e->getMessage());
        }
    }
}
