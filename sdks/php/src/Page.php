<?php

declare(strict_types=1);

namespace Pagamentos;

use Pagamentos\Resource\ApiResource;

/**
 * One page of a list, newest first. `foreach ($page as $item)` walks this page;
 * `foreach ($page->autoPaging() as $item)` walks this page and every page after it,
 * fetching them as it goes.
 *
 * @template T of ApiResource
 * @implements \IteratorAggregate<int, T>
 */
final class Page implements \IteratorAggregate, \Countable
{
    /**
     * @param list<T> $data
     * @param bool $hasMore whether another page follows in this direction
     * @param array<string, mixed> $params the list parameters that gave this page
     * @param \Closure(array<string, mixed>): Page<T> $fetch fetches the page for other parameters
     */
    public function __construct(
        public readonly array $data,
        public readonly bool $hasMore,
        public readonly ?Response $lastResponse,
        private readonly array $params,
        private readonly \Closure $fetch,
    ) {
    }

    /**
     * The next page in the direction of this one (older objects; newer ones when the list was
     * asked with `endingBefore`), or null when there is none.
     *
     * @return Page<T>|null
     */
    public function nextPage(): ?self
    {
        if (!$this->hasMore || $this->data === []) {
            return null;
        }
        $params = $this->params;
        if (isset($params['endingBefore'])) {
            $params['endingBefore'] = $this->data[0]->toArray()['id'];
        } else {
            $params['startingAfter'] = $this->data[count($this->data) - 1]->toArray()['id'];
        }
        return ($this->fetch)($params);
    }

    /**
     * Every object from this page on, one page request at a time. Going forward (the default)
     * it yields newest to oldest; with `endingBefore` it walks towards the newest, yielding
     * oldest first.
     *
     * @return \Generator<int, T>
     */
    public function autoPaging(): \Generator
    {
        $backwards = isset($this->params['endingBefore']);
        $page = $this;
        while ($page !== null) {
            // One yield per item, not `yield from` an array: keys keep counting across pages, so
            // iterator_to_array() keeps every item.
            foreach ($backwards ? array_reverse($page->data) : $page->data as $item) {
                yield $item;
            }
            $page = $page->nextPage();
        }
    }

    /** @return \ArrayIterator<int, T> */
    public function getIterator(): \ArrayIterator
    {
        return new \ArrayIterator($this->data);
    }

    public function count(): int
    {
        return count($this->data);
    }
}
