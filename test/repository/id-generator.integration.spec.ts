// @ddd-kit/repository with @ddd-kit/id-generator: insert takes empty IDs from the aggregate's
// generator, and @Aggregate names the aggregate in events, errors and tokens.
import { describe, expect, it } from '@jest/globals';
import { Injectable } from '@nestjs/common';
import { Test } from '@nestjs/testing';
import { Aggregate, IdGeneratorModule } from '@ddd-kit/id-generator';
import {
  AggregateRoot,
  getRepositoryToken,
  InjectRepository,
  MissingIdGeneratorError,
  OnDataSync,
  OptimisticLockError,
  RepositoryModule,
  type DataSyncEvent,
  type IRepository,
} from '@ddd-kit/repository';

@Aggregate({ name: 'ticket', idGenerator: 'tickets' })
class Ticket extends AggregateRoot<string> {
  constructor(
    id: string | undefined,
    public title: string,
  ) {
    super(id);
  }
}

@Aggregate({ name: 'invoice', context: 'billing' })
class Invoice extends AggregateRoot<string> {
  constructor(
    id: string | undefined,
    public amount: number,
  ) {
    super(id);
  }
}

class Untracked extends AggregateRoot<string> {}

@Injectable()
class Tickets {
  readonly events: DataSyncEvent[] = [];
  constructor(
    @InjectRepository(Ticket) readonly tickets: IRepository<string, Ticket>,
    @InjectRepository(Invoice) readonly invoices: IRepository<string, Invoice>,
  ) {}

  @OnDataSync(Ticket)
  onTicket(events: readonly DataSyncEvent[]): void {
    this.events.push(...events);
  }
}

describe('repository × id-generator', () => {
  it("fills empty IDs from the aggregate's generator and names the aggregate as @Aggregate does", async () => {
    let n = 0;
    const moduleRef = await Test.createTestingModule({
      imports: [
        IdGeneratorModule.forRoot({ machine: 3, generators: { tickets: { generate: () => `T-${++n}` } } }),
        RepositoryModule.forRoot(),
        RepositoryModule.forFeature([Ticket, Invoice]),
      ],
      providers: [Tickets],
    }).compile();
    const app = await moduleRef.init();
    try {
      const { tickets, invoices, events } = app.get(Tickets);
      expect(getRepositoryToken(Ticket)).toBe('ticketRepository');
      expect(getRepositoryToken(Invoice)).toBe('billing.invoiceRepository');
      expect(app.get(getRepositoryToken(Ticket))).toBe(tickets);

      const first = new Ticket(undefined, 'first');
      const second = new Ticket('', 'second');
      await tickets.insert(first);
      await tickets.save(second);
      expect([first.id, second.id]).toEqual(['T-1', 'T-2']);
      expect(events.map((e) => [e.aggregate, e.id, e.version])).toEqual([
        ['ticket', 'T-1', 1],
        ['ticket', 'T-2', 1],
      ]);
      // A given ID is kept: the generator is only asked for empty ones.
      await tickets.insert(new Ticket('mine', 'given'));
      expect(n).toBe(2);

      // No generator named for invoices: the built-in one (a CosId on machine 3) makes them.
      const invoice = new Invoice(undefined, 10);
      await invoices.insert(invoice);
      expect(invoice.id).toMatch(/^[0-9A-Za-z]{15}$/);
      expect(await invoices.currentVersion(invoice.id)).toBe(1);

      const stale = (await tickets.findById('T-1'))!;
      await tickets.update((await tickets.findById('T-1'))!);
      await expect(tickets.update(stale)).rejects.toMatchObject({
        constructor: OptimisticLockError,
        aggregate: 'ticket',
        id: 'T-1',
        expectedVersion: 1,
      });
    } finally {
      await app.close();
    }
  });

  it('without IdGeneratorModule, insert of an aggregate without ID fails clearly and stores nothing', async () => {
    const moduleRef = await Test.createTestingModule({
      imports: [RepositoryModule.forRoot(), RepositoryModule.forFeature([Ticket, Untracked])],
    }).compile();
    const app = await moduleRef.init();
    try {
      const tickets = app.get<IRepository<string, Ticket>>(getRepositoryToken(Ticket));
      const ticket = new Ticket(undefined, 'orphan');
      const error = await tickets.insert(ticket).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(MissingIdGeneratorError);
      expect((error as Error).message).toMatch(/ticket has no id .* IdGeneratorModule\.forRoot/);
      expect(ticket.isNew()).toBe(true);
      // With an ID it needs no generator.
      await tickets.insert(new Ticket('t1', 'with id'));
      expect(await tickets.currentVersion('t1')).toBe(1);
      expect(getRepositoryToken(Untracked)).toBe('UntrackedRepository');
    } finally {
      await app.close();
    }
  });
});
