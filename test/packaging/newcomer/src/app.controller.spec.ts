import { Test, TestingModule } from '@nestjs/testing';
import { AppController } from './app.controller.js';
import { AppService } from './app.service.js';

describe('AppController', () => {
  let appController: AppController;

  beforeEach(async () => {
    const app: TestingModule = await Test.createTestingModule({
      controllers: [AppController],
      providers: [
        { provide: AppService, useValue: { register: async () => 'id-1' } },
      ],
    }).compile();

    appController = app.get<AppController>(AppController);
  });

  describe('register', () => {
    it('should return the id of the new user', async () => {
      expect(await appController.register('alice')).toEqual({ id: 'id-1' });
    });
  });
});
